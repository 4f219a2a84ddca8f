/**
 * docs/api.md section 3: the item builders (leaderboardItem, listItem, tableRow) and the event types, which append
 * one entry per push, over HTTP.
 */
import { describe, expect, it } from "vitest"
import { backends, expectError, expectSuccess, expectUnchanged, suiteName, useServer } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("widget types", backend), () => {
    const ctx = useServer(backend)
    /** A leaderboard point of `[name, value]` items, in order. */
    const board = (...items: ReadonlyArray<readonly [string, number]>) => ({
      leaderboard: items.map(([name, value]) => ({ name, value }))
    })

    describe("leaderboardItem", () => {
      it("adds new names and keeps the board ordered by value, highest first", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(await api.pushPoint(accessKey, "s", board(["x", 1], ["y", 9])))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "z", value: 5 } }))
        expect(await api.latest(accessKey, "s")).toEqual(board(["y", 9], ["z", 5], ["x", 1]))
        // Each push stores the whole resulting board as a new entry.
        expect(await api.entries(accessKey, "s")).toHaveLength(2)
      })

      it("replaces the value, prefix and suffix of an existing name, then re-sorts", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            leaderboard: [
              { name: "a", value: 5, prefix: "$" },
              { name: "b", value: 3 },
              { name: "c", value: 1 }
            ]
          })
        )
        expectSuccess(
          await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "c", value: "10", prefix: "€", suffix: "k" } })
        )
        expect(await api.latest(accessKey, "s")).toEqual({
          leaderboard: [
            { name: "c", value: 10, prefix: "€", suffix: "k" },
            { name: "a", value: 5, prefix: "$" },
            { name: "b", value: 3 }
          ]
        })
      })

      it("is stable for equal values", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(await api.pushPoint(accessKey, "s", board(["a", 5], ["b", 3])))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "c", value: 3 } }))
        expect(await api.latest(accessKey, "s")).toEqual(board(["a", 5], ["b", 3], ["c", 3]))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "d", value: 4 } }))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "e", value: 3 } }))
        expect(await api.latest(accessKey, "s")).toEqual(board(["a", 5], ["d", 4], ["b", 3], ["c", 3], ["e", 3]))
      })

      it("builds on the latest board after an empty-point clear", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(await api.pushPoint(accessKey, "s", board(["old", 100])))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboard: [] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "new", value: 1 } }))
        expect(await api.points(accessKey, "s")).toEqual([{ leaderboard: [{ name: "new", value: 1 }] }])
      })
    })

    describe("listItem", () => {
      it("goes to the top of the latest list", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "list" })
        expectSuccess(await api.pushPoint(accessKey, "s", { list: [{ listItem: "a" }, { listItem: "b" }] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { listItem: "c" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { listItem: "d" }))
        expect(await api.points(accessKey, "s")).toEqual([
          { list: [{ listItem: "a" }, { listItem: "b" }] },
          { list: [{ listItem: "c" }, { listItem: "a" }, { listItem: "b" }] },
          { list: [{ listItem: "d" }, { listItem: "c" }, { listItem: "a" }, { listItem: "b" }] }
        ])
      })
    })

    describe("tableRow", () => {
      it("goes directly under the header row; number cells become strings", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "table" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            table: [
              ["name", "n"],
              ["a", "1"]
            ]
          })
        )
        expectSuccess(await api.pushPoint(accessKey, "s", { tableRow: ["b", 2] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { tableRow: ["c", "3"] }))
        expect(await api.latest(accessKey, "s")).toEqual({
          table: [
            ["name", "n"],
            ["c", "3"],
            ["b", "2"],
            ["a", "1"]
          ]
        })
        expect(await api.entries(accessKey, "s")).toHaveLength(3)
      })

      it("a row whose width differs from the header is 400 invalid_point and changes nothing", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "table" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            table: [
              ["name", "n"],
              ["a", "1"]
            ]
          })
        )
        await expectUnchanged(api, accessKey, ["s"], async () => {
          expectError(await api.pushPoint(accessKey, "s", { tableRow: ["b", "2", "x"] }), 400, "invalid_point")
          expectError(await api.pushPoint(accessKey, "s", { tableRow: ["b"] }), 400, "invalid_point")
        })
      })
    })

    describe("events append one entry per push", () => {
      it("text-feed keeps every pushed item, oldest first", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "text-feed" })
        for (let i = 0; i < 5; i++) expectSuccess(await api.pushPoint(accessKey, "s", { title: `t${i}`, msg: "m" }))
        expect(await api.points(accessKey, "s")).toEqual(
          Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, msg: "m" }))
        )
      })

      it("an array push with one bad element stores none of it", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "world-map" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushPoint(
              accessKey,
              "s",
              Array.from({ length: 20 }, (_, i) => ({ latitude: i === 19 ? 95 : i, longitude: 0 }))
            ),
            400,
            "invalid_point"
          )
        )
        expect(await api.entries(accessKey, "s")).toEqual([])
      })
    })
  })
}
