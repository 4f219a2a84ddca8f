#!/usr/bin/env -S node --max-semi-space-size=64
// The installed `dashstream` command: the bundle that `pnpm build` writes (`bundle/bin.js`, see scripts/bundle.mjs).
// This file is in the repository, so installing the workspace can link the command before the build has run.
import "../bundle/bin.js"
