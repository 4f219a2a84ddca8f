/**
 * The line protocol loads of the push benchmark (docs/api.md section 13.1), one wrk Lua script per load that
 * sends the same bodies to InfluxDB's and to Dashstream's `/write`:
 *
 * - `lp`: 1,000 lines of one field each (`cpu,cpu=cpuN,host=web1 usage_idle=<v> <ns>`), 100 to each of the 10
 *   streams `cpu.usage_idle{cpu=cpuN,host=web1}`, N = 0..9, all declared as sparklines;
 * - `lp100`: the same lines over 100 series (N = 0..99), 10 to each of 100 declared streams;
 * - `telegraf`: the same 1,000 lines shaped as Telegraf's `cpu` input sends them, ten fields each (`usage_user`,
 *   `usage_system`, ..., `usage_guest_nice`): `usage_idle` goes to the same 10 declared streams, the other nine
 *   field values of each line (90%) to undeclared streams, which Dashstream skips.
 *
 * Each line has its own timestamp, 1 ms apart, and each request its own second of them, so every value is a new
 * entry rather than the replacement of an earlier one (as the JSON 1,000-point scenario does).
 */

/** How many lines a body has. */
export const lineCount = 1000

export type LineLoad = "lp" | "lp100" | "telegraf"

/** How many series (values of the `cpu` tag) the lines of each load go over, line `k` to series `k % count`. */
export const seriesCount: Record<LineLoad, number> = { lp: 10, lp100: 100, telegraf: 10 }

/** The declared streams (sparkline widgets) the loads write to, by docs/api.md section 13.1's naming. */
export const declaredStreams: ReadonlyArray<string> = Array.from(
  { length: Math.max(...Object.values(seriesCount)) },
  (_, n) => `cpu.usage_idle{cpu=cpu${n},host=web1}`
)

/** The ten fields of Telegraf's `cpu` input, in the order it writes them. */
export const cpuFields: ReadonlyArray<string> = [
  "usage_user",
  "usage_system",
  "usage_idle",
  "usage_nice",
  "usage_iowait",
  "usage_irq",
  "usage_softirq",
  "usage_steal",
  "usage_guest",
  "usage_guest_nice"
]

/** Field values per line of each load, and the number of them per body that go to undeclared streams. */
export const fieldsPerLine: Record<LineLoad, number> = { lp: 1, lp100: 1, telegraf: cpuFields.length }
export const skippedPerBody = (load: LineLoad): number => lineCount * (fieldsPerLine[load] - 1)

/** Line `k`'s text up to its timestamp, with the space before it: `cpu,cpu=cpu3,host=web1 usage_idle=97.3 `. */
const head = (load: LineLoad, k: number): string => {
  const tags = `cpu,cpu=cpu${k % seriesCount[load]},host=web1`
  const value = (f: number) => (((k * 7 + f * 13) % 1000) / 10 + 0.012345678901).toString()
  if (load !== "telegraf") return `${tags} usage_idle=${value(2)} `
  return `${tags} ${cpuFields.map((name, f) => `${name}=${value(f)}`).join(",")} `
}

/**
 * Line `k`'s timestamp after its request's second (`<second><k as 3 digits>000000`): nanoseconds, `k` milliseconds
 * into that second, and the line's end.
 */
const tail = (k: number): string => `${String(k).padStart(3, "0")}000000\n`

/** One body of `load` whose lines' timestamps lie in UNIX second `second` (a TypeScript twin of the Lua below). */
export const lineBody = (load: LineLoad, second: number): string =>
  Array.from({ length: lineCount }, (_, k) => head(load, k) + String(second) + tail(k)).join("")

/**
 * The Lua prelude defining `lines(i)`, the body of a thread's `i`th request. Each wrk thread numbers its requests from
 * 1, so the thread's id (set by `setup`, 2 threads) keeps the two threads' seconds apart, and the start (10^6 s apart
 * per wall-clock second, in 2001..2014) those of the warm-up and the measured run. Seconds stay below 10^10, which
 * LuaJIT's `tostring` prints as integers.
 */
export const linesLua = (load: LineLoad): string => {
  const quote = (s: string) => JSON.stringify(s) // plain ASCII without backslashes: a valid Lua literal too
  const heads = Array.from({ length: lineCount }, (_, k) => quote(head(load, k))).join(",\n")
  const tails = Array.from({ length: lineCount }, (_, k) => quote(tail(k))).join(",")
  return `local threads = 0
setup = function(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local heads = {
${heads}
}
local tails = {${tails}}
local start = 1000000000 + (os.time() % 400) * 1000000
local function lines(i)
  local second = tostring(start + i * 2 + tid)
  local parts = {}
  for k = 1, ${lineCount} do parts[k] = heads[k] .. second .. tails[k] end
  return table.concat(parts)
end`
}
