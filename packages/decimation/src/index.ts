/**
 * `@dashstream/decimation`: the decimation pass (docs/api.md section 9), its selection algorithm and its tier policy.
 * The selection and the policy are pure; the pass does its I/O through core's `DecimationStore` port only.
 * Timestamps and durations are integer microseconds.
 */
export { defaultPassSizes, runLockedPass, runPass, type PassOptions, type PassResult } from "./DecimationPass.js"
export {
  decimationHorizon,
  defaultPolicy,
  formatPolicy,
  InvalidTierPolicy,
  makePolicy,
  parsePolicy,
  type Tier,
  type TierPolicy
} from "./TierPolicy.js"
export {
  makeSelector,
  makeStreamsSelector,
  selectDeletions,
  SelectionInputError,
  type Entry,
  type EntryId,
  type SelectionMode,
  type SelectionOptions,
  type Selector,
  type StreamEntry,
  type StreamKey,
  type StreamsSelectionOptions,
  type StreamsSelector
} from "./Selection.js"
