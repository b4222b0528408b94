// A modal dialog on the platform's <dialog>: showModal() makes the rest of the page inert and
// keeps Tab inside, Escape closes it (its `cancel` event), and focus goes back to whatever opened
// it, so a keyboard user continues where they were.
import { useEffect, useRef, type ReactNode } from 'react'

export function Dialog({ title, onClose, children, className }: { title: string; onClose: () => void; children: ReactNode; className?: string }) {
  const ref = useRef<HTMLDialogElement>(null)
  const close = useRef(onClose)
  close.current = onClose
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    dialog.showModal()
    // showModal() focuses the first focusable element (the close button); a dialog that asks for
    // input marks its field with data-autofocus, and the person can type at once.
    dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus()
    return () => {
      dialog.close()
      // The opener may be gone (e.g. the drawer closed meanwhile); then focus stays put.
      if (opener?.isConnected) opener.focus()
    }
  }, [])
  return (
    <dialog
      ref={ref}
      className={className ? `dialog ${className}` : 'dialog'}
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        // Escape: React owns whether the dialog is open, so close through the parent.
        event.preventDefault()
        close.current()
      }}
      onClick={(event) => {
        // A click on the backdrop (the dialog element itself, outside its content) closes it.
        if (event.target === ref.current) close.current()
      }}
    >
      <div className="dialog-body">
        <header className="dialog-head">
          <h2 id="dialog-title">{title}</h2>
          <button type="button" className="icon-button" aria-label="Close" onClick={() => close.current()}>
            <svg aria-hidden="true" focusable="false" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" className="icon">
              <path d="M6 6l12 12M18 6L6 18" />
            </svg>
          </button>
        </header>
        {children}
      </div>
    </dialog>
  )
}
