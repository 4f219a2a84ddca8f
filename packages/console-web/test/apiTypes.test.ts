import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { openApiDocument } from "@dashstream/http"
import { apiTypes } from "../scripts/apiTypes.mjs"

/**
 * The console's API types (`src/browser/generated/api.ts`, not in git) are written by the build from the OpenAPI
 * document of `@dashstream/http`; the page type-checks against them. They must be those of the API as it is now.
 */
describe("the console's generated API types", () => {
  it("are the types of the current OpenAPI document (run `pnpm build` after changing the API)", async () => {
    const written = readFileSync(new URL("../src/browser/generated/api.ts", import.meta.url), "utf8")
    const current = await apiTypes(openApiDocument())
    assert.isTrue(written === current, "src/browser/generated/api.ts is out of date: run `pnpm build`")
  })

  it("describe every answer the console reads", async () => {
    const types = await apiTypes(openApiDocument())
    for (const name of ["Account", "ReadEntry", "WidgetWithLatest", "Tile", "Dashboard", "Rotation"])
      assert.include(types, `readonly ${name}: {`, name)
  })
})
