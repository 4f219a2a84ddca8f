import { HttpApiEndpoint, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors, type KnownErrorTag } from "../HttpErrors.js"

/**
 * The admin endpoints every account resource has (docs/api.md sections 11, 15 and 18: dashboards, rotations, alert
 * rules, receivers), declared once: create, list, get, replace and delete under
 * `/admin/accounts/:id/<path>[/:<idParam>]`. A resource names itself, its path, its body and its answer; the
 * operation ids (`createDashboard`, `listDashboards`, ...), the path parameters, the list's shape (`{"<listKey>":
 * [...]}`) and the errors of each endpoint (400 `invalid_json`/`invalid_request` for a body, 404
 * `account_not_found` and the resource's own not-found error) are derived here. Endpoints a resource has beyond
 * these (a dashboard's new view token, a rule's silence) are declared next to it with {@link resourcePath}.
 */

/** The account id of an admin path. */
const AccountId = Schema.String.annotations({ description: "The account id" })

/** `/admin/accounts/:id`'s parameter: the account id. */
export const AccountIdParam = Schema.Struct({ id: AccountId })

/** The decoded parameters of `/admin/accounts/:id/<path>/:<idParam>`. */
export type ResourcePath<IdParam extends string> = { readonly id: string } & { readonly [K in IdParam]: string }

/** The parameters of `/admin/accounts/:id/<path>/:<idParam>`: the account id and the resource's id (`noun`'s). */
export const resourcePath = <IdParam extends string>(
  idParam: IdParam,
  noun: string
): Schema.Schema<ResourcePath<IdParam>, Readonly<Record<string, string>>> =>
  Schema.Struct({
    id: AccountId,
    [idParam]: Schema.String.annotations({ description: `The ${noun} id` })
  }) as unknown as Schema.Schema<ResourcePath<IdParam>, Readonly<Record<string, string>>>

/** What an account resource declares; every other part of its endpoints is derived from it. */
export interface AccountResourceSpec<
  Name extends string,
  Plural extends string,
  IdParam extends string,
  ListKey extends string,
  NotFound extends KnownErrorTag,
  CreateBody extends Schema.Schema.Any,
  UpdateBody extends Schema.Schema.Any,
  View extends Schema.Schema.Any
> {
  /** The resource in the operation ids, singular and plural: `Dashboard`, `Dashboards`. */
  readonly name: Name
  readonly plural: Plural
  /** Its lower-case noun in descriptions: `dashboard`. */
  readonly noun: string
  /** Its path segment under `/admin/accounts/:id/`: `dashboards`, `alert-rules`. */
  readonly path: string
  /** The path parameter of one resource's id: `dashboardId`. */
  readonly idParam: IdParam
  /** The key of the list answer: `{"dashboards": [...]}`. */
  readonly listKey: ListKey
  /** The identifier of the list answer in the OpenAPI document: `DashboardList`. */
  readonly listIdentifier: string
  /** The bodies of create (`POST`) and replace (`PUT`), and the resource as every answer shows it. */
  readonly createBody: CreateBody
  readonly updateBody: UpdateBody
  readonly view: View
  /** The error of an id that is not one of the account's (`DashboardNotFound`: 404 `dashboard_not_found`). */
  readonly notFound: NotFound
  /** The OpenAPI summary of each endpoint. */
  readonly summaries: {
    readonly create: string
    readonly list: string
    readonly get: string
    readonly update: string
    readonly delete: string
  }
  /** The OpenAPI description of create and replace, when they need more than a summary. */
  readonly descriptions?: { readonly create?: string; readonly update?: string }
}

/**
 * Adds the create, list, get, replace and delete endpoints of one account resource (see the module comment) to an
 * admin group, in that order: `create<Name>` (`POST .../<path>`, 201 the resource), `list<Plural>` (`GET
 * .../<path>`, 200 `{"<listKey>": [...]}`), `get<Name>`, `update<Name>` (`PUT`, 200 the new version) and
 * `delete<Name>` (204) on `.../<path>/:<idParam>`.
 */
export const accountResourceEndpoints =
  <
    Name extends string,
    Plural extends string,
    IdParam extends string,
    ListKey extends string,
    NotFound extends KnownErrorTag,
    CreateBody extends Schema.Schema.Any,
    UpdateBody extends Schema.Schema.Any,
    View extends Schema.Schema.Any
  >(
    spec: AccountResourceSpec<Name, Plural, IdParam, ListKey, NotFound, CreateBody, UpdateBody, View>
  ) =>
  <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, Error, R, TopLevel extends boolean>(
    group: HttpApiGroup.HttpApiGroup<Id, Endpoints, Error, R, TopLevel>
  ) => {
    const collection = `/admin/accounts/:id/${spec.path}` as const
    const one = `${collection}/:${spec.idParam}` as const
    const OneParam = resourcePath(spec.idParam, spec.noun)
    const List = Schema.Struct({ [spec.listKey]: Schema.Array(spec.view) } as {
      readonly [K in ListKey]: Schema.Array$<View>
    }).annotations({ identifier: spec.listIdentifier })
    const create = HttpApiEndpoint.post(`create${spec.name}`, collection)
      .setPath(AccountIdParam)
      .setPayload(spec.createBody as CreateBody & HttpApiEndpoint.HttpApiEndpoint.ValidatePayload<"POST", CreateBody>)
      .addSuccess(spec.view as View, { status: 201 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, spec.summaries.create)
    const update = HttpApiEndpoint.put(`update${spec.name}`, one)
      .setPath(OneParam)
      .setPayload(spec.updateBody as UpdateBody & HttpApiEndpoint.HttpApiEndpoint.ValidatePayload<"PUT", UpdateBody>)
      .addSuccess(spec.view as View)
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound", spec.notFound))
      .annotate(OpenApi.Summary, spec.summaries.update)
    const createText = spec.descriptions?.create
    const updateText = spec.descriptions?.update
    return group
      .add(createText === undefined ? create : create.annotate(OpenApi.Description, createText))
      .add(
        HttpApiEndpoint.get(`list${spec.plural}`, collection)
          .setPath(AccountIdParam)
          .addSuccess(List)
          .addError(errors("AccountNotFound"))
          .annotate(OpenApi.Summary, spec.summaries.list)
      )
      .add(
        HttpApiEndpoint.get(`get${spec.name}`, one)
          .setPath(OneParam)
          .addSuccess(spec.view as View)
          .addError(errors("AccountNotFound", spec.notFound))
          .annotate(OpenApi.Summary, spec.summaries.get)
      )
      .add(updateText === undefined ? update : update.annotate(OpenApi.Description, updateText))
      .add(
        HttpApiEndpoint.del(`delete${spec.name}`, one)
          .setPath(OneParam)
          .addSuccess(Schema.Void, { status: 204 })
          .addError(errors("AccountNotFound", spec.notFound))
          .annotate(OpenApi.Summary, spec.summaries.delete)
      )
  }
