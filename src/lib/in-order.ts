// Runs tasks of the same key one after another, in the order they were queued; tasks of other
// keys run alongside. A key with nothing queued holds no memory.
export class InOrder {
  private readonly tails = new Map<string, Promise<void>>()

  /** Queues `task` behind the ones already queued for `key`; its failure goes to `onError`. */
  run(key: string, task: () => Promise<void>, onError: (error: unknown) => void): void {
    const tail = (this.tails.get(key) ?? Promise.resolve()).then(task).catch(onError)
    this.tails.set(key, tail)
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    })
  }

  /** Resolves once every task queued so far, and every task those queued meanwhile, has run. */
  async idle(): Promise<void> {
    while (this.tails.size) await Promise.all(this.tails.values())
  }
}
