/**
 * The use cases of Dashstream: what the HTTP adapter and the CLI call. Each asks for the storage ports it needs;
 * none knows about HTTP or about a particular database. Written in `usecases/` by concern (authentication, push,
 * read, admin); this module is the public list, re-exported as the `UseCases` namespace of `@dashstream/core`.
 */

export { decodeCommand } from "./PushRequest.js"
export { authenticate } from "./usecases/Authenticate.js"
export { ingest, type IngestDone, ingestDirect, push, type PushDone, pushDirect, pushPoint } from "./usecases/Push.js"
export {
  defaultReadPageSize,
  read,
  readLatestDirect,
  type ReadLatestDone,
  type ReadPages,
  readPages,
  type ReadParams,
  readViewPages,
  type ViewReadParams
} from "./usecases/Read.js"
export {
  addAccessKey,
  createAccount,
  type CreatedAccount,
  createWidget,
  deleteWidget,
  listAccounts,
  listWidgets,
  listWidgetsWithLatest,
  MAX_ACCOUNT_NAME_LENGTH,
  type WidgetWithLatest
} from "./usecases/Admin.js"
