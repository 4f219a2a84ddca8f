import { assert, describe, it } from "vitest"
import {
  clearCommandTypes,
  collectionKeys,
  decimationMode,
  isNumericWidgetType,
  isWidgetType,
  lineProtocolWidgetTypes,
  numericWidgetTypes,
  scaleWidgetTypes,
  timeRangeWidgetTypes,
  supportsClearCommand,
  widgetKind,
  widgetTypes,
  widgetTypeTable
} from "../src/index.js"

describe("the widget types (docs/api.md sections 2-4)", () => {
  it("are 20 distinct identifiers, and isWidgetType knows exactly them", () => {
    assert.strictEqual(new Set(widgetTypes).size, 20)
    for (const type of widgetTypes) assert.isTrue(isWidgetType(type))
    for (const value of ["Number", "sparkline ", "", "line_graph", 7, null, undefined, ["number"]]) {
      assert.isFalse(isWidgetType(value), JSON.stringify(value))
    }
    assert.deepStrictEqual(Object.keys(widgetTypeTable).sort(), [...widgetTypes].sort())
  })

  it("take the clear command exactly when they are series or events types other than the gallery", () => {
    for (const type of widgetTypes) {
      const kind = widgetKind(type)
      assert.strictEqual(
        supportsClearCommand(type),
        (kind === "series" || kind === "events") && type !== "gallery",
        type
      )
    }
    assert.deepStrictEqual(
      widgetTypes.filter((type) => supportsClearCommand(type)),
      [...clearCommandTypes]
    )
    assert.deepStrictEqual(clearCommandTypes, [
      "sparkline",
      "line-graph",
      "usa-map",
      "world-map",
      "text-feed",
      "xy-graph"
    ])
  })
})

describe("the lists derived from the widget-type table", () => {
  it("hold what each property says, in the order of widgetTypes", () => {
    assert.deepStrictEqual(numericWidgetTypes, [
      "number",
      "horizontal-bar",
      "vertical-bar",
      "dial",
      "sparkline",
      "line-graph"
    ])
    assert.deepStrictEqual(scaleWidgetTypes, ["horizontal-bar", "vertical-bar", "dial"])
    assert.deepStrictEqual(timeRangeWidgetTypes, ["number", "sparkline", "line-graph"])
    assert.deepStrictEqual(lineProtocolWidgetTypes, [...numericWidgetTypes, "text-feed", "label"])
    assert.deepStrictEqual(collectionKeys, ["leaderboard", "chart", "list", "table", "matrix"])
  })

  it("know a numeric type from its kind, and nothing else as numeric", () => {
    for (const type of widgetTypes) {
      const kind = widgetKind(type)
      assert.strictEqual(isNumericWidgetType(type), kind === "numeric" || kind === "series", type)
    }
    for (const value of ["", "Number", "label", "numeric"]) assert.isFalse(isNumericWidgetType(value), value)
  })

  it("decimate numbers and xy-graph points by their extremes, every other type by its last entry", () => {
    assert.deepStrictEqual(
      widgetTypes.filter((type) => decimationMode(type) === "extremes"),
      [...numericWidgetTypes, "xy-graph"]
    )
  })
})
