/**
 * `@dashstream/core`: Dashstream's stream semantics, point shapes, use cases and storage ports, with no I/O. Every
 * name is listed: what the adapters (storage, HTTP, server), the client-facing packages and embedders use, and the
 * types their signatures name. Anything else in `src/` is core's own; `./testing` holds the in-memory store and the
 * storage contract suites.
 */

// Accounts, access keys and the account port (docs/api.md section 7).
export { type Account, AccountId, digestAccessKey, type KeyDigest, newAccessKey, newAccountId } from "./Account.js"
export { AccountStore, type WidgetLookupDone } from "./AccountStore.js"
export { answerGuarded } from "./GuardedAnswer.js"
export {
  type AccountCache,
  type AccountCacheOptions,
  cachedAccountStore,
  defaultAccountCacheOptions,
  Doorkeeper,
  makeAccountCache,
  withAccountCache
} from "./CachedAccountStore.js"

// Widgets, streams and points (docs/api.md sections 2 and 3).
export type { StreamId, Widget } from "./Widget.js"
export { decimationMode, isWidgetType, WidgetType, widgetTypes } from "./WidgetType.js"
export { isStreamName, MAX_STREAM_NAME_LENGTH, StreamName } from "./StreamName.js"
export type {
  ChartItem,
  ChartPoint,
  GalleryPoint,
  HtmlPoint,
  ImagePoint,
  LabelPoint,
  LeaderboardItem,
  LeaderboardPoint,
  ListPoint,
  MapColor,
  MapPoint,
  MatrixPoint,
  NumberPoint,
  PointOp,
  StoredPoint,
  TablePoint,
  TextFeedPoint,
  XyPoint
} from "./Point.js"
export { decodePoint } from "./PointDecoder.js"
// Request bodies decoded by Schema with errors that never echo deeply nested input.
export { withBoundedIssues } from "./BoundedIssues.js"
// Pushes from any protocol (IngestRequest), and the original JSON body as one parser into it.
export {
  type IngestPart,
  type IngestRequest,
  type IngestResult,
  type PartDecoder,
  type PartRejection,
  type SkippedStreams,
  type UndeclaredStreams
} from "./Ingest.js"
export { decodeCommand, decodeJsonPart, decodePushRequest, type JsonPart, type PushRequest } from "./PushRequest.js"
// Other pushers (docs/api.md section 13): each protocol is a parser into an IngestRequest.
export { decodeSmashing, type SmashingPart, smashingRequest } from "./ingest/Smashing.js"
// InfluxDB line protocol (docs/api.md section 13.1): a parser into an IngestRequest.
export {
  FieldKind,
  LineBatch,
  type LineProtocolApi,
  lineProtocolLimits,
  type LineProtocolOptions,
  NO_TIMESTAMP,
  parseLineProtocol,
  parsePrecision,
  type Precision
} from "./ingest/LineProtocol.js"
export { decodeLineProtocol, lineProtocolWidgetTypes } from "./ingest/LineProtocolRequest.js"
export { type EntryWrite, type Mutation, needsLatest } from "./Apply.js"
export { type Limits, defaultLimits } from "./Limits.js"

// Time and the `since` cursor (docs/api.md section 6).
export { formatTs, isoTime, MAX_SECONDS, type Micros, micros } from "./Time.js"

// Errors (docs/api.md section 5).
export {
  AccountNotFound,
  AlertRuleNotFound,
  Conflict,
  DashboardNotFound,
  Forbidden,
  RotationNotFound,
  InvalidJson,
  InvalidPoint,
  InvalidRequest,
  InvalidSince,
  PayloadTooLarge,
  type PushRejection,
  quoted,
  ReceiverNotFound,
  ReceiverUnreachable,
  StorageError,
  type StorageFailure,
  StorageUnavailable,
  StreamNotFound,
  UnsupportedCommand
} from "./Errors.js"

// The use cases, and writing: planning a group of pushes, queueing them for a group commit.
export * as UseCases from "./UseCases.js"
export {
  type LatestEntry,
  mergePuts,
  type PlanError,
  type PlannedStream,
  type StateSource,
  WritePlan
} from "./WritePlan.js"
export {
  type GroupEnd,
  type GroupResult,
  type GroupRunner,
  type GroupSize,
  type GroupTurn,
  nodeTimers,
  PendingWrite,
  pointsOf,
  type QueueTimers,
  retryGroup,
  takeGroup,
  type WhenDurable,
  type WriteDone,
  type WriteError,
  type WriteObserver,
  WriteQueue,
  type WriteQueueErrors,
  type WriteQueueOptions,
  writeSize
} from "./WriteQueue.js"

// The stream port: reads, writes, pages rendered by the database.
export {
  type DirectStreamStore,
  type LivePage,
  type LiveQuery,
  pageOfRendered,
  type RangeQuery,
  type ReadQuery,
  type RenderedPage,
  renderedTs,
  renderEntries,
  type StoredEntry,
  StreamStore,
  type StreamWrite,
  type Withdrawable,
  withEffectForms
} from "./StreamStore.js"

// Live updates (docs/api.md section 10): what storage publishes, and the backlog-then-live hand-over.
export {
  ChangeFeed,
  type ChangedEntry,
  type ChangeListener,
  type ChangeSink,
  deletedChange,
  Fanout,
  gapChange,
  mutationChanges,
  type PendingChange,
  type StreamChange
} from "./ChangeFeed.js"
export { follow, type Follower, type FollowParams, type FollowStart, type Following, type LiveSink } from "./Follow.js"
export {
  type DashboardFeed,
  type DashboardFollower,
  type DashboardLayout,
  type DashboardSink,
  type FiringSource,
  firingData,
  followDashboard
} from "./FollowDashboard.js"

// Dashboards (docs/api.md section 11).
export {
  CreateDashboardBody,
  type Dashboard,
  type DashboardChange,
  DashboardId,
  DashboardName,
  decodeLayout,
  MAX_NAME_LENGTH,
  Threshold,
  Tile,
  TileOptions,
  UpdateDashboardBody
} from "./Dashboard.js"
// Tile options (docs/api.md section 15): the status colour rule, also bundled by the dashboard page (`./tileStatus`).
export {
  RANGE_MAX,
  RANGE_MIN,
  rangeTypes,
  STALE_AFTER_MAX,
  STALE_AFTER_MIN,
  scaleTypes,
  type ThresholdColor,
  thresholdBands,
  thresholdColor,
  thresholdColors,
  thresholdTypes,
  type TileOptionsData
} from "./TileStatus.js"
export * as Dashboards from "./Dashboards.js"
export { DashboardStore } from "./DashboardStore.js"
export { type StoragePorts, type StorageServices, storageContext } from "./StoragePorts.js"
export {
  digestViewToken,
  newViewToken,
  type ViewKind,
  viewKinds,
  viewPath,
  viewSegment,
  type ViewTokenDigest,
  viewUrl
} from "./ViewToken.js"

// Account resources and shared views: what dashboards and rotations are instances of.
export {
  type AccountResource,
  accountNotFound,
  newResourceId,
  requireAccount,
  resourceId,
  type ResourceKind,
  type ResourceStorage,
  resourceUseCases
} from "./AccountResource.js"
export {
  type NewView,
  type SharedView,
  sharedViewJson,
  sharedViewUseCases,
  shareLink,
  type ViewKindOf,
  type ViewStorage,
  type WithViewToken
} from "./SharedView.js"
export { type DashboardRow, dashboardOfRow, type RotationRow, rotationOfRow } from "./ViewRows.js"

// Rotations (docs/api.md section 15).
export {
  checkDashboardIds,
  checkRotationBody,
  IntervalSeconds,
  MAX_INTERVAL_SECONDS,
  MAX_ROTATION_DASHBOARDS,
  MIN_INTERVAL_SECONDS,
  type Rotation,
  RotationBody,
  type RotationChange,
  RotationId
} from "./Rotation.js"
export * as Rotations from "./Rotations.js"

// Alerts (docs/api.md section 18): rule and receiver bodies, the rule state machine, the deadline queue, the port.
export {
  AlertRuleBody,
  type AlertRuleDefinition,
  AlertRuleId,
  alertStates,
  type AlertState,
  checkRuleRefs,
  Condition,
  decodeCondition,
  decodeRuleBody,
  ForSeconds,
  isThresholdCondition,
  MAX_FOR_SECONDS,
  MAX_NO_DATA_SECONDS,
  MAX_RULE_RECEIVERS,
  MIN_NO_DATA_SECONDS,
  newAlertRuleId
} from "./alerts/AlertRule.js"
export {
  decodeReceiverBody,
  isHttpUrl,
  MAX_RECEIVER_SECRET_LENGTH,
  MAX_RECEIVER_URL_LENGTH,
  newReceiverId,
  type Receiver,
  ReceiverBody,
  type ReceiverForDelivery,
  ReceiverId,
  type ReceiverKind,
  receiverKinds,
  ReceiverSecret,
  ReceiverUrl,
  type SecretChange
} from "./alerts/Receiver.js"
export {
  initialEvaluation,
  isSent,
  nextDeadline,
  type RuleEvaluation,
  type RuleInput,
  type RuleTerms,
  step,
  type Step,
  type Transition
} from "./alerts/RuleStateMachine.js"
export { DeadlineQueue } from "./alerts/DeadlineQueue.js"
export { AlertEngine, layer as alertEngineLayer, make as makeAlertEngine } from "./alerts/AlertEngine.js"
export { type FiringRule, type RuleSignal, type RuleSignals, signalled as ruleSignalled } from "./alerts/RuleSignal.js"
export {
  defaultRuleWatchOptions,
  make as makeRuleWatch,
  type RuleListener,
  type RuleWatch,
  type RuleWatchOptions
} from "./alerts/RuleWatch.js"
export {
  AlertDeliverer,
  type DelivererOptions,
  type DeliveryOutcome,
  LEASE as DELIVERY_LEASE,
  make as makeAlertDeliverer,
  NotificationSender,
  sendTestNotification
} from "./alerts/AlertDeliverer.js"
export {
  ALERTMANAGER_RESEND_EVERY,
  alertmanagerBody,
  ATTEMPT_TIMEOUT_MS,
  type AttemptResult,
  attemptOutcome,
  DELIVERY_GIVE_UP_AFTER,
  deliveryRequest,
  EVENT_ID_HEADER,
  type NotificationRequest,
  notificationRequest,
  type NotifiedEvent,
  retryDelay,
  SIGNATURE_HEADER,
  signature,
  slackBody,
  targetUrl,
  TEST_RULE_NAME,
  testNotification,
  webhookBody
} from "./alerts/Notification.js"
export {
  type AlertEventRow,
  type AlertReceiverRow,
  type AlertRuleRow,
  eventOfRow,
  receiverOfRow,
  ruleOfRow
} from "./alerts/AlertRows.js"
export * as AlertAdmin from "./alerts/AlertAdmin.js"
export {
  type AlertEvent,
  type AlertEventId,
  type AlertRule,
  type AlertRuleChange,
  AlertStore,
  type AttemptOutcome,
  type ClaimedDelivery,
  type DeliveryId,
  type DeliveryState,
  deliveryStates,
  type DeliveryStatus,
  type EvaluationCommit,
  type LeaseOwner,
  MAX_EVENTS_PER_READ,
  newAlertEventId,
  newDeliveryId,
  newLeaseOwner,
  type NewAlertRule,
  type ReceiverChange
} from "./alerts/AlertStore.js"

// The per-bucket selection rule of decimation and range reads.
export { BucketKeeper, type SelectionMode } from "./BucketSelection.js"
// Per-block summaries: what the bucket rule keeps of one stored block, and when a range read may take it instead.
export {
  readsAsSummary,
  storesSummary,
  summarizeBlock,
  type SummaryBuckets,
  summaryBuckets,
  summaryMaxSkipped
} from "./BlockSummary.js"
// Range reads: the bucketing of `points=N`, the streaming selection, and the one read every adapter calls.
export {
  defaultRangeBlocksPerPage,
  defaultRangePageSize,
  makeRangeSelector,
  MAX_POINTS,
  MIN_POINTS,
  type PackedBlocks,
  type PointBuckets,
  pointBuckets,
  type RangeEntry,
  type RangeSelector,
  type RangeSource,
  readRangeFrom
} from "./RangeRead.js"
export {
  isRangeRead,
  limitFromText,
  MAX_LIMIT,
  type RangeParams,
  rangeQueryOf,
  type RangeWindow
} from "./RangeParams.js"

// Decimation (docs/api.md section 9): the port the pass runs over.
export {
  type DecimationEntry,
  DecimationStore,
  type DecimationStream,
  type EntryChunk,
  type EntryId,
  type StreamPage
} from "./DecimationStore.js"

// Copying a deployment between stores (docs/api.md section 12).
export {
  type AccessKeyRecord,
  type AccountRecord,
  CopyMismatch,
  type CopyOptions,
  type CopyProgress,
  type CopyResult,
  type CopyListing,
  type CopyTally,
  type CopySource,
  CopyStorageFailed,
  type CopyTarget,
  copyStore,
  type DashboardRecord,
  type RotationRecord,
  type EntryRecord,
  schemaProblem,
  type SourceProblem,
  SourceRefused,
  StoreCopy,
  type StoreCounts,
  alertCopyTables,
  type AlertTable,
  type AlertRowRecord,
  type StreamRecord,
  TargetNotEmpty
} from "./StoreCopy.js"

// Console sessions (docs/api.md section 14): signed sessions of the admin token, and the port of sign-outs.
export * as ConsoleSession from "./ConsoleSession.js"
export {
  defaultSessionCacheOptions,
  makeSessionCache,
  type SessionCache,
  type SessionCacheOptions,
  SessionStore,
  withSessionCache
} from "./SessionStore.js"

// Rate limiting (docs/api.md section 5).
export { type Grant, retryAfterSeconds, TokenBuckets } from "./RateLimit.js"
