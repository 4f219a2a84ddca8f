import { assert, describe, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import { defaults, parseUrl } from "../src/index.js"

const ok = (url: string) => {
  const parsed = parseUrl(url)
  if (Either.isLeft(parsed)) throw new Error(`expected ${url} to parse: ${parsed.left.message}`)
  return parsed.right
}

const fails = (url: string) => {
  const parsed = parseUrl(url)
  if (Either.isRight(parsed)) throw new Error(`expected ${url} to fail`)
  assert.strictEqual(parsed.left._tag, "InvalidPostgresUrl")
  return parsed.left.message
}

describe("parseUrl", () => {
  it("takes postgres:// and postgresql:// URLs with the default pool settings", () => {
    for (const url of ["postgres://u:p@db.example:5433/app", "postgresql://u:p@db.example:5433/app"]) {
      const config = ok(url)
      assert.strictEqual(Redacted.value(config.url), url)
      assert.deepStrictEqual(
        { ...config, url: undefined },
        {
          url: undefined,
          poolMax: defaults.poolMax,
          poolIdleTimeoutMs: defaults.poolIdleTimeoutMs,
          connectTimeoutMs: defaults.connectTimeoutMs,
          statementTimeoutMs: null,
          schema: "public",
          options: null
        }
      )
    }
    assert.strictEqual(defaults.poolMax, 10)
    assert.strictEqual(defaults.connectTimeoutMs, 5_000)
  })

  it("reads the pool parameters and strips them, keeping pg's own parameters", () => {
    const config = ok(
      "postgres://u:p@h/db?sslmode=disable&pool_max=3&pool_idle_timeout_ms=0&connect_timeout_ms=250&statement_timeout_ms=1500&schema=tenant_1&application_name=x&options=-c%20work_mem%3D8MB"
    )
    assert.strictEqual(Redacted.value(config.url), "postgres://u:p@h/db?sslmode=disable&application_name=x")
    assert.strictEqual(config.poolMax, 3)
    assert.strictEqual(config.poolIdleTimeoutMs, 0)
    assert.strictEqual(config.connectTimeoutMs, 250)
    assert.strictEqual(config.statementTimeoutMs, 1500)
    assert.strictEqual(config.schema, "tenant_1")
    assert.strictEqual(config.options, "-c work_mem=8MB")
  })

  it("rejects other schemes and unparsable URLs without echoing the URL", () => {
    assert.match(fails("mysql://u:secret@h/db"), /must start with postgres:\/\/ or postgresql:\/\//)
    assert.match(fails("sqlite:./data.db"), /must start with postgres/)
    const message = fails("postgres://u:secret@[not-an-ipv6/db")
    assert.match(message, /not a valid URL/)
    assert.notInclude(message, "secret")
  })

  it("rejects bad, out-of-range and repeated parameters with a message naming them", () => {
    assert.match(fails("postgres://h/db?pool_max=0"), /pool_max .* from 1 to 10000, got "0"/)
    assert.match(fails("postgres://h/db?pool_max=ten"), /pool_max/)
    assert.match(fails("postgres://h/db?pool_max=1.5"), /pool_max/)
    assert.match(fails("postgres://h/db?connect_timeout_ms=0"), /connect_timeout_ms/)
    assert.match(fails("postgres://h/db?statement_timeout_ms=-1"), /statement_timeout_ms/)
    assert.match(fails("postgres://h/db?pool_idle_timeout_ms="), /pool_idle_timeout_ms/)
    assert.match(fails("postgres://h/db?pool_max=1&pool_max=2"), /pool_max more than once/)
    assert.match(fails("postgres://h/db?schema=Tenant"), /schema .* lower-case identifier/)
    assert.match(fails("postgres://h/db?schema=a;drop"), /schema/)
    assert.match(fails("postgres://h/db?schema=1abc"), /schema/)
  })

  it("accepts a Redacted URL", () => {
    const parsed = parseUrl(Redacted.make("postgres://h/db?pool_max=2"))
    assert.strictEqual(Either.isRight(parsed) ? parsed.right.poolMax : undefined, 2)
  })
})
