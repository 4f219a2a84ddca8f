import { HttpApi, HttpApiBuilder, HttpApiSwagger, OpenApi } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { jsonTextResponse } from "./replies.js"

/**
 * `GET /openapi.json` (the document of the served API, computed once) and `GET /docs` (Swagger UI from
 * `HttpApiSwagger`, whose script, stylesheet and document are inlined in the page, so it works offline). Under a
 * base path (docs/api.md section 16) the document's `servers` is `[{ "url": basePath }]`, so the page's requests carry it.
 */
export const docsLive = (api: HttpApi.HttpApi.Any, basePath = ""): Layer.Layer<never> => {
  const served =
    basePath === ""
      ? api
      : (api as HttpApi.HttpApi<string, any, any, any>).annotate(OpenApi.Servers, [{ url: basePath }])
  const spec = jsonTextResponse(JSON.stringify(OpenApi.fromApi(served as HttpApi.HttpApi<string, any, any, any>)))
  const openApi = HttpApiBuilder.Router.use((router) => router.get("/openapi.json", Effect.succeed(spec)))
  const swagger = HttpApiSwagger.layer({ path: "/docs" }).pipe(
    Layer.provide(Layer.succeed(HttpApi.Api, { api: served as any, context: Context.empty() }))
  )
  return Layer.merge(openApi, swagger)
}
