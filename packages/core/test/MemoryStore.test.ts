import {
  changeFeedSuite,
  dashboardSuite,
  MemoryStore,
  rotationSuite,
  sessionSuite,
  storageSuite
} from "@dashstream/core/testing"

storageSuite("memory", () => MemoryStore.layer)
dashboardSuite("memory", () => MemoryStore.layer)
rotationSuite("memory", () => MemoryStore.layer)
changeFeedSuite("memory", () => MemoryStore.layer)
sessionSuite("memory", () => MemoryStore.layer)
