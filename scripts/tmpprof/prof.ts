import { buildApp } from '/work/main/src/app.ts'
import { testConfig } from '/work/main/test/helper.ts'
import { createTestDatabase } from '/work/main/test/setup/database.ts'
import { loadConfig } from '/work/main/src/config.ts'
const db = await createTestDatabase()
const config = { ...loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: db.url, PORT: '0', DATA_DIR: '/tmp/bt/data', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' }), jwtSecret: 'x'.repeat(48) }
for (let i = 0; i < 3; i++) { const a = await buildApp(config, {}); await a.ready(); await a.close() }
const { Session } = await import('node:inspector/promises')
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start')
const c0 = process.cpuUsage()
for (let i = 0; i < 10; i++) { const a = await buildApp(config, {}); await a.ready(); await a.close() }
const c = process.cpuUsage(c0); console.log('cpu per build', (c.user + c.system) / 10000)
const { profile } = await s.post('Profiler.stop')
const self = new Map<string, number>()
const byId = new Map(profile.nodes.map((n: any) => [n.id, n]))
const dt = profile.timeDeltas; const counts = new Map<number, number>()
profile.samples.forEach((id: number, i: number) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)))
for (const [id, us] of counts) { const n: any = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-3).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + us) }
// inclusive by url
const incl = new Map<string, number>()
const parent = new Map<number, number>(); for (const n of profile.nodes as any[]) for (const ch of n.children ?? []) parent.set(ch, n.id)
for (const [id, us] of counts) { const seen = new Set<string>(); let cur: number | undefined = id; while (cur !== undefined) { const n: any = byId.get(cur); const u = n.callFrame.url; const m = u.match(/node_modules\/((@[^/]+\/)?[^/]+)/); const key = m ? m[1] : u.includes('/src/') ? 'src/' + u.split('/src/')[1] : u || '(native)'; if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + us) } cur = parent.get(cur) } }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 10000).toFixed(1)}ms ${k}`).join('\n'))
console.log('--- inclusive by module (per build)')
console.log([...incl].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / 10000).toFixed(1)}ms ${k}`).join('\n'))
await db.drop(); process.exit(0)
