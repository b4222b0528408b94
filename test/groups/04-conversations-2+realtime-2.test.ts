import { runGroup } from './groups.ts'

runGroup(import.meta.url)
