import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { CreateDashboardBody, decodeLayout, MAX_NAME_LENGTH } from "../src/Dashboard.js"
import { MemoryStore } from "../src/testing/index.js"
import { MAX_STREAM_NAME_LENGTH, streamNameProblem } from "../src/StreamName.js"
import * as UseCases from "../src/UseCases.js"

/**
 * Every length rule counts characters as the README says: Unicode code points, not UTF-16 units
 * (a 200-emoji dashboard name was refused). An emoji outside the BMP is one character and two UTF-16 units.
 */
const emoji = "😀"

describe("length rules count characters (code points)", () => {
  it("dashboard names and tile titles: 200 emoji are 200 characters, 201 are too many", () => {
    const decode = Schema.decodeUnknownEither(CreateDashboardBody)
    assert.isTrue(Either.isRight(decode({ name: emoji.repeat(MAX_NAME_LENGTH) })))
    assert.isTrue(Either.isLeft(decode({ name: emoji.repeat(MAX_NAME_LENGTH + 1) })))
    assert.isTrue(Either.isLeft(decode({ name: "n".repeat(MAX_NAME_LENGTH + 1) })))
    const tile = (title: string) => [{ streamName: "s", title, x: 0, y: 0, w: 1, h: 1 }]
    assert.isTrue(Either.isRight(decodeLayout(tile(emoji.repeat(MAX_NAME_LENGTH)))))
    const refused = decodeLayout(tile(emoji.repeat(MAX_NAME_LENGTH + 1)))
    assert.isTrue(Either.isLeft(refused) && refused.left.path === "tiles[0].title")
  })

  it.effect("account names: 200 emoji are accepted, 201 refused", () =>
    Effect.gen(function* () {
      const ok = yield* UseCases.createAccount(emoji.repeat(200))
      assert.strictEqual(ok.name, emoji.repeat(200))
      const refused = yield* Effect.flip(UseCases.createAccount(emoji.repeat(201)))
      assert.strictEqual(refused._tag, "InvalidRequest")
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it("stream names: 255 emoji are accepted, 256 refused", () => {
    assert.isUndefined(streamNameProblem(emoji.repeat(MAX_STREAM_NAME_LENGTH)))
    assert.isDefined(streamNameProblem(emoji.repeat(MAX_STREAM_NAME_LENGTH + 1)))
  })
})
