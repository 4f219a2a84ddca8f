/**
 * The bounds of a rotation's body (docs/api.md section 15.2) as plain numbers. This module imports nothing, so the
 * console's browser bundle shows them beside its fields (`@dashstream/core/rotationLimits`) without pulling effect
 * in; `RotationBody` in `Rotation.ts` validates with them.
 */

/** The shortest and longest time a rotation shows each dashboard, in whole seconds (docs/api.md section 15.2). */
export const MIN_INTERVAL_SECONDS = 5
export const MAX_INTERVAL_SECONDS = 3600

/** The most dashboards a rotation shows (docs/api.md section 15.2). */
export const MAX_ROTATION_DASHBOARDS = 50
