// tap's `before` script: build the migrated template once before the test files start.
import { ensureTemplate } from './database.ts'

const name = await ensureTemplate()
console.log(`# test template database: ${name}`)
