// Choose the events to receive: one checkbox per event, worded for people, the event's name beside.
import { eventLabel } from './format.ts'

export function EventPicker<E extends string>({ legend, events, value, onChange }: { legend: string; events: readonly E[]; value: E[]; onChange: (next: E[]) => void }) {
  return (
    <fieldset className="event-picker">
      <legend>{legend}</legend>
      <div className="checks">
        {events.map((event) => (
          <label key={event} className="check">
            <input
              type="checkbox"
              checked={value.includes(event)}
              onChange={(e) => onChange(e.target.checked ? events.filter((x) => x === event || value.includes(x)) : value.filter((x) => x !== event))}
            />
            <span>
              {eventLabel(event)} <code className="muted small">{event}</code>
            </span>
          </label>
        ))}
      </div>
      {value.length === 0 && (
        <p className="hint" role="status">
          Choose at least one event.
        </p>
      )}
    </fieldset>
  )
}
