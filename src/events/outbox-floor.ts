// Where the outbox's background scans start. The planner (rows not yet planned) and the sweeper
// (rows not yet relayed) look for the lowest ids still waiting. Every row they mark leaves a dead
// index entry behind until VACUUM removes it, so a scan from id 0 walks all the rows handled since
// the last vacuum: measured at 1,500 events/s with no vacuum, the planner's claim went from 2 ms
// to 70 ms within a minute. A scan from a floor walks only the last few seconds.
//
// The floor is a value of the outbox's id sequence read at least `lagMs` before a run that then
// scanned everything above the previous floor: every row with an id at or below it had taken its
// id by then, so its transaction had `lagMs` to commit before that run looked. What a floor can
// miss (a transaction open longer than the lag, rows another instance held locked and then rolled
// back) is found by a full pass from id 0, every `fullPassMs` and on the first run.
export interface FloorOptions {
  /** How long a transaction may take between taking its id and committing. */
  lagMs: number
  /** How often a run scans from id 0 instead (stragglers). */
  fullPassMs: number
}

export interface FloorRun {
  /** Scan ids strictly above this one. */
  fromId: bigint
  startedAt: number
  full: boolean
}

export class ScanFloor {
  private floor = 0n
  private lastFullPass = Number.NEGATIVE_INFINITY
  /** Sequence values and when they were read, oldest first, waiting to become the floor. */
  private samples: { at: number; id: bigint }[] = []

  constructor(
    private readonly highWater: () => Promise<bigint>,
    private readonly options: FloorOptions,
    // Monotonic: a wall-clock jump must not make a fresh reading look a lag old.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Starts a run: reads the sequence when the last reading is half a lag old. */
  async begin(): Promise<FloorRun> {
    const last = this.samples.at(-1)
    if (!last || this.now() - last.at >= this.options.lagMs / 2) {
      const id = await this.highWater()
      // Stamped after the read: every id at or below it was taken before this moment.
      this.samples.push({ at: this.now(), id })
    }
    const startedAt = this.now()
    const full = startedAt - this.lastFullPass >= this.options.fullPassMs
    return { fromId: full ? 0n : this.floor, startedAt, full }
  }

  /** The run scanned every waiting row above its floor (its last batch came back short). */
  complete(run: FloorRun): void {
    if (run.full) this.lastFullPass = run.startedAt
    while (this.samples.length && this.samples[0]!.at <= run.startedAt - this.options.lagMs) {
      const { id } = this.samples.shift()!
      if (id > this.floor) this.floor = id
    }
  }

  /** The current floor (for tests and logs). */
  get value(): bigint {
    return this.floor
  }
}
