import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { Dashstream } from "../src/index.js"
import { formatSeconds } from "../src/Follow.js"
import { parseRetryAfter } from "../src/internal/backoff.js"
import { isRetrySafe } from "../src/internal/retrySafe.js"
import { SseParser } from "../src/internal/sse.js"

describe("SseParser", () => {
  const wire =
    '\uFEFFretry: 2000\r\n\r\n: ping\n\nevent: entry\nid: 1.5\ndata: {"ts":1.5,\n' +
    'data: "point":1}\r\n\r\nevent: clear\rid: 2\rdata: {}\r\rdata:no space\n\nid\n\nevent: x\n\n'

  it("parses events, multi-line data, comments, retry, ids and every line ending", () => {
    const parser = new SseParser()
    const events = parser.feed(wire)
    expect(events).toEqual([
      { event: "entry", id: "1.5", data: '{"ts":1.5,\n"point":1}' },
      { event: "clear", id: "2", data: "{}" },
      { event: "message", id: "2", data: "no space" }
    ])
    expect(parser.retry).toBe(2000)
    expect(parser.lastEventId).toBe("")
  })

  it("gives the same events whatever the chunking, also a CRLF split across chunks", () => {
    const whole = new SseParser().feed(wire)
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser()
      const events = []
      for (let i = 0; i < wire.length; i += size) events.push(...parser.feed(wire.slice(i, i + size)))
      expect(events, `chunks of ${size}`).toEqual(whole)
    }
  })
})

describe("isRetrySafe", () => {
  it.each([
    [{ point: { number: 1, timestamp: 1_700_000_000 } }, true],
    [
      {
        point: [
          { number: 1, timestamp: 1 },
          { number: 2, timestamp: 2 }
        ]
      },
      true
    ],
    [{ command: "clear" as const }, true],
    [{ point: null }, true],
    [{ point: { leaderboard: [] } }, true],
    [{ point: {} }, true],
    [{ point: 1 }, false],
    [{ point: "1" }, false],
    [{ point: { number: 1 } }, false],
    [{ point: { number: 1, timestamp: null } }, false],
    [{ point: { delta: 1 } }, false],
    [{ point: { delta: 1, timestamp: 1_700_000_000 } }, false],
    [{ point: { leaderboardItem: { name: "a", value: 1 } } }, false],
    [{ point: { listItem: "a" } }, false],
    [{ point: { tableRow: ["a"] } }, false],
    [{ point: { label: "x" } }, false],
    [{ point: [{ number: 1, timestamp: 1 }, { number: 2 }] }, false],
    [{ point: [{ x: 1, y: 2 }] }, false]
  ])("%j -> %s", (part, safe) => {
    expect(isRetrySafe(part)).toBe(safe)
  })
})

describe("helpers", () => {
  it("formatSeconds prints seconds exactly to the microsecond, never in exponent notation", () => {
    expect(formatSeconds(0)).toBe("0")
    expect(formatSeconds(1_700_000_000)).toBe("1700000000")
    expect(formatSeconds(1_700_000_000.123456)).toBe("1700000000.123456")
    expect(formatSeconds(1_700_000_000.12)).toBe("1700000000.12")
    expect(formatSeconds(0.0000001)).toBe("0")
    expect(formatSeconds(0.000001)).toBe("0.000001")
  })

  it("parseRetryAfter reads seconds and HTTP dates", () => {
    expect(parseRetryAfter(null)).toBeUndefined()
    expect(parseRetryAfter("2")).toBe(2000)
    expect(parseRetryAfter("soon")).toBeUndefined()
    const now = Date.parse("2024-01-01T00:00:00Z")
    expect(parseRetryAfter("Mon, 01 Jan 2024 00:00:03 GMT", now)).toBe(3000)
  })
})

describe("portability", () => {
  it("the library imports nothing but its own modules, the contract module and eventsource-parser, which import nothing (no node: built-ins, no packages): it runs in browsers", () => {
    const check = (dir: string, allowed: RegExp, extension = ".ts") => {
      const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(extension))
      expect(files.length).toBeGreaterThan(1)
      for (const file of files) {
        const text = readFileSync(join(dir, file), "utf8")
        for (const [, specifier] of text.matchAll(/(?<![\w"'`.])(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
          expect(specifier, `${file} imports ${specifier}`).toMatch(allowed)
        }
        expect(text, file).not.toMatch(/\b(process|Buffer|require)\s*[.(]/)
      }
    }
    check(join(import.meta.dirname, "../src"), /^(\.\.?\/|@dashstream\/contract$|eventsource-parser$)/)
    check(join(import.meta.dirname, "../../contract/src"), /^\.\.?\//)
    const sseParser = dirname(createRequire(import.meta.url).resolve("eventsource-parser"))
    check(sseParser, /^\.\.?\//, ".js")
  })
})

describe("types", () => {
  it("type points per widget type (checked by the type-check, never run)", () => {
    const typed = (ds: Dashstream<{ revenue: "number"; board: "leaderboard"; visits: "sparkline" }>) => {
      void ds.push("revenue", { number: 42, prefix: "$" })
      void ds.push("revenue", { delta: -1 })
      void ds.push("visits", [{ number: 1, timestamp: 1_700_000_000 }])
      void ds.push("board", { leaderboardItem: { name: "a", value: 1 } })
      // @ts-expect-error a leaderboard item is not a number point
      void ds.push("revenue", { leaderboardItem: { name: "a", value: 1 } })
      // @ts-expect-error an array is not accepted by a number widget
      void ds.push("revenue", [{ number: 1, timestamp: 1 }])
      // @ts-expect-error an unknown stream
      void ds.push("nope", 1)
      void ds.pushMany([
        { streamName: "revenue", point: 1 },
        { streamName: "visits", command: "clear" }
      ])
      // @ts-expect-error a board point for the number stream
      void ds.pushMany([{ streamName: "revenue", point: { leaderboard: [] } }])
      void (async () => {
        for await (const entry of ds.read("board")) {
          const first: number | undefined = entry.point.leaderboard[0]?.value
          void first
        }
        const latest = await ds.latest("revenue")
        const n: number | undefined = latest?.point.number
        void n
      })
    }
    const untyped = (ds: Dashstream) => {
      void ds.push("anything", { label: "x" })
      void ds.push("anything", 42)
    }
    expect(typeof typed).toBe("function")
    expect(typeof untyped).toBe("function")
  })
})
