import { assert, describe, it } from "vitest"
import { clearCommandTypes, isWidgetType, supportsClearCommand, widgetKind, widgetTypes } from "../src/index.js"

describe("the widget types (contract sections 2-4)", () => {
  it("are 20 distinct identifiers, and isWidgetType knows exactly them", () => {
    assert.strictEqual(new Set(widgetTypes).size, 20)
    for (const type of widgetTypes) assert.isTrue(isWidgetType(type))
    for (const value of ["Number", "sparkline ", "", "line_graph", 7, null, undefined, ["number"]]) {
      assert.isFalse(isWidgetType(value), JSON.stringify(value))
    }
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
  })
})
