import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../../Account.js"
import { AccountStore } from "../../AccountStore.js"
import { StreamName } from "../../StreamName.js"
import {
  at,
  delta,
  findAccount,
  newAccount,
  newWidget,
  put,
  readAll,
  type SuiteTest,
  T0,
  write,
  writeAll
} from "./fixtures.js"

/**
 * The `AccountStore` part of the storage contract suite (docs/api.md sections 2, 5 and 7): accounts and access keys,
 * widgets. Registered by `storageSuite` inside its `describe`.
 */
export const accountStoreSuite = (test: SuiteTest): void => {
  describe("accounts", () => {
    test(
      "create, get and count",
      Effect.gen(function* () {
        const store = yield* AccountStore
        assert.strictEqual(yield* store.countAccounts, 0)
        const { account: a } = yield* newAccount("alpha")
        const { account: b } = yield* newAccount("")
        assert.strictEqual(yield* store.countAccounts, 2)
        assert.deepStrictEqual(Option.getOrNull(yield* store.getAccount(a.id)), a)
        assert.deepStrictEqual(Option.getOrNull(yield* store.getAccount(b.id)), b)
        assert.strictEqual(Option.getOrNull(yield* store.getAccount(newAccountId())), null)
      })
    )

    test(
      "list: every account, oldest first (then by id), with its name and creation time, never a key",
      Effect.gen(function* () {
        const store = yield* AccountStore
        assert.deepStrictEqual(yield* store.listAccounts, [])
        const make = (name: string, createdAt: number) =>
          Effect.gen(function* () {
            const account = { id: newAccountId(), name, createdAt }
            yield* store.createAccount(account, digestAccessKey(newAccessKey()))
            return account
          })
        const late = yield* make("late", T0 + 5)
        const early = yield* make("", T0)
        const tieA = yield* make("tie a", T0 + 2)
        const tieB = yield* make("tie b", T0 + 2)
        const ties = [tieA, tieB].sort((a, b) => (a.id < b.id ? -1 : 1))
        const listed = yield* store.listAccounts
        assert.deepStrictEqual(listed, [early, ...ties, late])
        for (const account of listed) assert.deepStrictEqual(Object.keys(account).sort(), ["createdAt", "id", "name"])
      })
    )

    test(
      "an access key is found by its digest; an unknown digest is not",
      Effect.gen(function* () {
        const { account, accessKey } = yield* newAccount()
        assert.strictEqual(yield* findAccount(accessKey), account.id)
        assert.strictEqual(yield* findAccount(newAccessKey()), null)
      })
    )

    test(
      "added keys work beside the old ones; revokeOthers stops every other key of the account only",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account, accessKey: k1 } = yield* newAccount()
        const { account: other, accessKey: otherKey } = yield* newAccount()
        const k2 = newAccessKey()
        yield* store.addAccessKey(account.id, digestAccessKey(k2), T0 + 1, false)
        assert.strictEqual(yield* findAccount(k1), account.id)
        assert.strictEqual(yield* findAccount(k2), account.id)
        const k3 = newAccessKey()
        yield* store.addAccessKey(account.id, digestAccessKey(k3), T0 + 2, true)
        assert.strictEqual(yield* findAccount(k1), null)
        assert.strictEqual(yield* findAccount(k2), null)
        assert.strictEqual(yield* findAccount(k3), account.id)
        assert.strictEqual(yield* findAccount(otherKey), other.id)
      })
    )

    test(
      "adding a key to an unknown account fails with AccountNotFound",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const error = yield* Effect.flip(store.addAccessKey(newAccountId(), digestAccessKey(newAccessKey()), T0, false))
        assert.strictEqual(error._tag, "AccountNotFound")
      })
    )
  })

  describe("widgets", () => {
    test(
      "create returns the widget; list is ordered by stream name (code points)",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account } = yield* newAccount()
        const created = yield* store.createWidget(account.id, StreamName.make("revenue"), "number", T0 + 7)
        assert.deepStrictEqual(
          { accountId: created.accountId, streamName: created.streamName, type: created.type },
          { accountId: account.id, streamName: StreamName.make("revenue"), type: "number" }
        )
        assert.strictEqual(created.createdAt, T0 + 7)
        for (const n of ["b", "ä", "a b", "B", "a"]) yield* newWidget("list", n, account.id)
        const listed = yield* store.listWidgets(account.id)
        assert.deepStrictEqual(
          listed.map((w) => w.streamName),
          ["B", "a", "a b", "b", "revenue", "ä"]
        )
        assert.deepStrictEqual(
          listed.find((w) => w.streamName === "revenue"),
          created
        )
      })
    )

    test(
      "a new account lists no widgets",
      Effect.gen(function* () {
        const { account } = yield* newAccount()
        assert.deepStrictEqual(yield* Effect.flatMap(AccountStore, (s) => s.listWidgets(account.id)), [])
      })
    )

    test(
      "the same name twice in one account is a Conflict; in two accounts it is allowed",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account: a } = yield* newAccount()
        const { account: b } = yield* newAccount()
        const first = yield* newWidget("number", "revenue", a.id)
        const error = yield* Effect.flip(store.createWidget(a.id, StreamName.make("revenue"), "dial", T0))
        assert.strictEqual(error._tag, "Conflict")
        const inB = yield* newWidget("dial", "revenue", b.id)
        assert.notStrictEqual(inB.id, first.id)
        assert.deepStrictEqual(
          (yield* store.listWidgets(a.id)).map((w) => w.type),
          ["number"]
        )
      })
    )

    test(
      "findWidgets returns the account's widgets of those names only",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account: a } = yield* newAccount()
        const { account: b } = yield* newAccount()
        const x = yield* newWidget("number", "x", a.id)
        const y = yield* newWidget("table", "y", a.id)
        yield* newWidget("number", "z", b.id)
        const found = yield* store.findWidgets(a.id, ["x", "y", "z", "missing"])
        assert.deepStrictEqual(
          [...found.entries()].sort(([k1], [k2]) => (k1 < k2 ? -1 : 1)),
          [
            ["x", x],
            ["y", y]
          ]
        )
        assert.strictEqual((yield* store.findWidgets(a.id, [])).size, 0)
        assert.strictEqual((yield* store.findWidgets(newAccountId(), ["x"])).size, 0)
      })
    )

    test(
      "delete removes the widget and its entries; the name can be declared again, empty, with a new id",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account } = yield* newAccount()
        const old = yield* newWidget("number", "gone", account.id)
        const kept = yield* newWidget("number", "kept", account.id)
        yield* write(old, put({ number: 1 }, { number: 2 }))
        yield* write(kept, put({ number: 3 }))
        yield* store.deleteWidget(account.id, "gone")
        assert.deepStrictEqual(
          (yield* store.listWidgets(account.id)).map((w) => w.streamName),
          ["kept"]
        )
        assert.strictEqual((yield* store.findWidgets(account.id, ["gone"])).size, 0)
        assert.deepStrictEqual(yield* readAll(old), [])
        assert.deepStrictEqual(yield* readAll(kept), [{ ts: T0, point: { number: 3 } }])
        const again = yield* newWidget("number", "gone", account.id)
        assert.notStrictEqual(again.id, old.id)
        assert.deepStrictEqual(yield* readAll(again), [])
        yield* write(again, delta(4))
        assert.deepStrictEqual(yield* readAll(again), [{ ts: T0, point: { number: 4 } }])
      })
    )

    test(
      "delete: AccountNotFound for an unknown account, StreamNotFound for an unknown or another account's stream",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account: a } = yield* newAccount()
        const { account: b } = yield* newAccount()
        yield* newWidget("number", "theirs", b.id)
        const e1 = yield* Effect.flip(store.deleteWidget(newAccountId(), "theirs"))
        assert.strictEqual(e1._tag, "AccountNotFound")
        const e2 = yield* Effect.flip(store.deleteWidget(a.id, "missing"))
        assert.strictEqual(e2._tag, "StreamNotFound")
        const e3 = yield* Effect.flip(store.deleteWidget(a.id, "theirs"))
        assert.strictEqual(e3._tag, "StreamNotFound")
        assert.strictEqual((yield* store.listWidgets(b.id)).length, 1)
      })
    )

    test(
      "create and list fail with AccountNotFound for an unknown account",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const e1 = yield* Effect.flip(store.createWidget(newAccountId(), StreamName.make("s"), "number", T0))
        assert.strictEqual(e1._tag, "AccountNotFound")
        const e2 = yield* Effect.flip(store.listWidgets(newAccountId()))
        assert.strictEqual(e2._tag, "AccountNotFound")
      })
    )

    test(
      "a write to a deleted widget fails with StreamNotFound and stores nothing of its batch",
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { account } = yield* newAccount()
        const live = yield* newWidget("number", "live", account.id)
        const old = yield* newWidget("number", "old", account.id)
        yield* store.deleteWidget(account.id, "old")
        yield* newWidget("number", "old", account.id)
        const error = yield* Effect.flip(
          writeAll(
            [
              { widget: live, op: put({ number: 1 }), path: "streams[0].point" },
              { widget: old, op: put({ number: 2 }), path: "streams[1].point" }
            ],
            at(0)
          )
        )
        assert.strictEqual(error._tag, "StreamNotFound")
        assert.strictEqual(error._tag === "StreamNotFound" ? error.path : undefined, "streams[1].streamName")
        assert.deepStrictEqual(yield* readAll(live), [])
      })
    )
  })
}
