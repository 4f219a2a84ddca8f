// Writes the OpenAPI document of the whole API (admin and console included), as `GET /openapi.json` serves it with
// the admin API on, to dist/openapi.json (exported as `@dashstream/http/openapi.json`). Runs after `tsc -b` in the
// root build script, from the built package; the console's API types are generated from it
// (packages/console-web/scripts/build.mjs).
import { writeFileSync } from "node:fs"
import { openApiDocument } from "../dist/index.js"

writeFileSync(new URL("../dist/openapi.json", import.meta.url), `${JSON.stringify(openApiDocument(), null, 2)}\n`)
