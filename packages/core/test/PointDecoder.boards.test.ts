import { describe, it } from "@effect/vitest"
import { expectOp, invalidAt, put, tooLargeAt } from "./pointDecoderSupport.js"

describe("decodePoint: leaderboard", () => {
  it("stores the whole board in the order given, items in canonical order", () => {
    expectOp(
      "leaderboard",
      {
        leaderboard: [
          { value: 1, name: "low", suffix: "pts" },
          { name: "high", value: "10", prefix: "#", x: 1 },
          { name: "mid", value: 5, prefix: null }
        ]
      },
      put({
        leaderboard: [
          { name: "low", value: 1, suffix: "pts" },
          { name: "high", value: 10, prefix: "#" },
          { name: "mid", value: 5 }
        ]
      })
    )
  })

  it("decodes leaderboardItem", () => {
    expectOp(
      "leaderboard",
      { leaderboardItem: { value: "3", name: "a", suffix: "x" } },
      {
        _tag: "LeaderboardItem",
        item: { name: "a", value: 3, suffix: "x" }
      }
    )
    invalidAt("leaderboard", { leaderboardItem: { name: "a" } }, "point.leaderboardItem.value")
    invalidAt("leaderboard", { leaderboardItem: [{ name: "a", value: 1 }] }, "point.leaderboardItem")
  })

  it("rejects both leaderboard and leaderboardItem", () => {
    invalidAt(
      "leaderboard",
      { leaderboard: [{ name: "a", value: 1 }], leaderboardItem: { name: "b", value: 2 } },
      "point.leaderboardItem"
    )
  })

  it("points errors at the item and field", () => {
    const board = [{ name: "a", value: 1 }, { name: "b", value: 2 }, { name: "c" }]
    invalidAt("leaderboard", { leaderboard: board }, "point.leaderboard[2].value")
    invalidAt("leaderboard", { leaderboard: board }, "streams[3].point.leaderboard[2].value", "streams[3].point")
    invalidAt("leaderboard", { leaderboard: [{ name: 1, value: 1 }] }, "point.leaderboard[0].name")
    invalidAt("leaderboard", { leaderboard: [{ name: "a", value: 1 }, "b"] }, "point.leaderboard[1]")
    invalidAt("leaderboard", { leaderboard: [{ name: "a", value: 1, prefix: 2 }] }, "point.leaderboard[0].prefix")
    invalidAt("leaderboard", { leaderboard: { name: "a", value: 1 } }, "point.leaderboard")
  })

  it("rejects other shapes", () => {
    invalidAt("leaderboard", 42, "point")
    invalidAt("leaderboard", { chart: [{ name: "a", value: 1 }] }, "point")
    invalidAt("leaderboard", [{ name: "a", value: 1 }], "point")
  })

  it("limits the board length", () => {
    tooLargeAt(
      "leaderboard",
      { leaderboard: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) },
      "point.leaderboard"
    )
  })
})

describe("decodePoint: pie-chart", () => {
  const items = [
    { name: "a", value: 1, color: "red" },
    { name: "b", value: "2", prefix: "$" }
  ]
  const stored = put({
    leaderboard: [
      { name: "a", value: 1 },
      { name: "b", value: 2, prefix: "$" }
    ]
  })

  it("accepts the board under leaderboard or chart, stored as leaderboard", () => {
    expectOp("pie-chart", { leaderboard: items }, stored)
    expectOp("pie-chart", { chart: items }, stored)
  })

  it("rejects both keys, leaderboardItem and bad items", () => {
    invalidAt("pie-chart", { leaderboard: items, chart: items }, "point.chart")
    invalidAt("pie-chart", { leaderboardItem: { name: "a", value: 1 } }, "point")
    invalidAt("pie-chart", { chart: [{ name: "a", value: "lots" }] }, "point.chart[0].value")
  })

  it("limits the chart length", () => {
    tooLargeAt("pie-chart", { chart: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) }, "point.chart")
  })
})

describe("decodePoint: bar-chart", () => {
  it("stores {chart: [{name, value, color?}]}", () => {
    expectOp(
      "bar-chart",
      {
        chart: [
          { color: "yellow", value: 3, name: "a" },
          { name: "b", value: "4", color: null, prefix: "$" }
        ]
      },
      put({
        chart: [
          { name: "a", value: 3, color: "yellow" },
          { name: "b", value: 4 }
        ]
      })
    )
  })

  it("accepts the chart under leaderboard too, stored as chart", () => {
    expectOp(
      "bar-chart",
      { leaderboard: [{ name: "a", value: 1, color: "#ff0000" }] },
      put({ chart: [{ name: "a", value: 1, color: "#ff0000" }] })
    )
  })

  it("rejects a non-string colour, both keys and bad items", () => {
    invalidAt("bar-chart", { chart: [{ name: "a", value: 1, color: 3 }] }, "point.chart[0].color")
    invalidAt("bar-chart", { chart: [], leaderboard: [] }, "point.leaderboard")
    invalidAt("bar-chart", { leaderboard: [{ name: "a", value: 1 }, { value: 1 }] }, "point.leaderboard[1].name")
  })

  it("limits the chart length", () => {
    tooLargeAt("bar-chart", { chart: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) }, "point.chart")
  })
})

describe("decodePoint: list", () => {
  it("stores {list: [{listItem}]}", () => {
    expectOp(
      "list",
      { list: [{ listItem: "a", x: 1 }, { listItem: "b" }] },
      put({ list: [{ listItem: "a" }, { listItem: "b" }] })
    )
  })

  it("decodes listItem", () => {
    expectOp("list", { listItem: "top" }, { _tag: "ListItem", listItem: "top" })
    // The original Python and Ruby clients send numbers as list items: stored as their text, like table cells.
    expectOp("list", { listItem: 5 }, { _tag: "ListItem", listItem: "5" })
    expectOp("list", { list: [{ listItem: 1.5 }] }, put({ list: [{ listItem: "1.5" }] }))
    invalidAt("list", { listItem: true }, "point.listItem")
  })

  it("rejects bad items and both keys", () => {
    invalidAt("list", { list: ["a"] }, "point.list[0]")
    invalidAt("list", { list: [{ listItem: "a" }, { listItem: null }] }, "point.list[1].listItem")
    invalidAt("list", { list: [{ listItem: "a" }], listItem: "b" }, "point.listItem")
    invalidAt("list", { list: "a" }, "point.list")
    invalidAt("list", "a", "point")
  })

  it("limits the list length", () => {
    tooLargeAt("list", { list: [1, 2, 3, 4].map((i) => ({ listItem: `${i}` })) }, "point.list")
  })
})

describe("decodePoint: table", () => {
  it("stores {table}, numbers as strings", () => {
    expectOp(
      "table",
      {
        table: [
          ["name", "score"],
          ["a", 1.5],
          [2, "b"]
        ]
      },
      put({
        table: [
          ["name", "score"],
          ["a", "1.5"],
          ["2", "b"]
        ]
      })
    )
  })

  it("decodes tableRow, numbers as strings", () => {
    expectOp("table", { tableRow: ["a", 7] }, { _tag: "TableRow", row: ["a", "7"] })
    invalidAt("table", { tableRow: "a" }, "point.tableRow")
    invalidAt("table", { tableRow: [] }, "point.tableRow")
    invalidAt("table", { tableRow: ["a", null] }, "point.tableRow[1]")
  })

  it("rejects bad cells, ragged rows and both keys", () => {
    invalidAt(
      "table",
      {
        table: [
          ["h1", "h2"],
          ["a", true]
        ]
      },
      "point.table[1][1]"
    )
    invalidAt("table", { table: [["h1", "h2"], ["a", "b"], ["c"]] }, "point.table[2]")
    invalidAt("table", { table: [["h1"], "row"] }, "point.table[1]")
    invalidAt("table", { table: [[]] }, "point.table[0]")
    invalidAt("table", { table: [["h"]], tableRow: ["a"] }, "point.tableRow")
    invalidAt("table", { table: "a,b" }, "point.table")
  })

  it("limits the number of rows and the width of a row", () => {
    tooLargeAt("table", { table: [["h"], ["a"], ["b"], ["c"]] }, "point.table")
    tooLargeAt("table", { table: [["a", "b", "c", "d"]] }, "point.table[0]")
    tooLargeAt("table", { tableRow: ["a", "b", "c", "d"] }, "point.tableRow")
  })
})

describe("decodePoint: multi-bar-graph", () => {
  it("stores {matrix}: header strings, labels as strings, numbers as numbers", () => {
    expectOp(
      "multi-bar-graph",
      {
        matrix: [
          ["", "2023", "2024"],
          ["north", 1, "2.5"],
          [7, 3, 4]
        ]
      },
      put({
        matrix: [
          ["", "2023", "2024"],
          ["north", 1, 2.5],
          ["7", 3, 4]
        ]
      })
    )
    expectOp("multi-bar-graph", { matrix: [["corner", "s"]] }, put({ matrix: [["corner", "s"]] }))
  })

  it("requires one number per series on every later row", () => {
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1]
        ]
      },
      "point.matrix[1]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1, 2, 3]
        ]
      },
      "point.matrix[1]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1, "lots"]
        ]
      },
      "point.matrix[1][2]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a"],
          [null, 1]
        ]
      },
      "point.matrix[1][0]"
    )
    invalidAt("multi-bar-graph", { matrix: [["", "a"], "x"] }, "point.matrix[1]")
  })

  it("requires a header row of strings with at least one series", () => {
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", 5],
          ["x", 1]
        ]
      },
      "point.matrix[0][1]"
    )
    invalidAt("multi-bar-graph", { matrix: [[""]] }, "point.matrix[0]")
    invalidAt("multi-bar-graph", { matrix: ["", "a"] }, "point.matrix[0]")
    invalidAt("multi-bar-graph", { matrix: "x" }, "point.matrix")
    invalidAt("multi-bar-graph", { chart: [] }, "point")
  })

  it("limits rows and series", () => {
    tooLargeAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a"],
          ["x", 1],
          ["y", 2],
          ["z", 3]
        ]
      },
      "point.matrix"
    )
    tooLargeAt("multi-bar-graph", { matrix: [["", "a", "b", "c"]] }, "point.matrix[0]")
  })
})

describe("decodePoint: image, label, html", () => {
  it("stores {imgUrl} for an absolute http(s) URL", () => {
    expectOp("image", { imgUrl: "https://example.com/i.png", x: 1 }, put({ imgUrl: "https://example.com/i.png" }))
    invalidAt("image", { imgUrl: "data:image/png;base64,AAAA" }, "point.imgUrl")
    invalidAt("image", { imgUrl: "//example.com/i.png" }, "point.imgUrl")
    invalidAt("image", { url: "https://example.com/i.png" }, "point.imgUrl")
    invalidAt("image", "https://example.com/i.png", "point")
  })

  it("stores {label}", () => {
    expectOp("label", { label: "hello" }, put({ label: "hello" }))
    invalidAt("label", { label: 5 }, "point.label")
    invalidAt("label", { text: "x" }, "point.label")
  })

  it("stores {html} as given", () => {
    expectOp("html", { html: "<b>hi</b><script>x</script>" }, put({ html: "<b>hi</b><script>x</script>" }))
    invalidAt("html", { html: ["<b>"] }, "point.html")
  })
})
