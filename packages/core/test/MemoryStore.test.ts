import { changeFeedSuite, dashboardSuite, MemoryStore, sessionSuite, storageSuite } from "@dashstream/core/testing"

storageSuite("memory", () => MemoryStore.layer)
dashboardSuite("memory", () => MemoryStore.layer)
changeFeedSuite("memory", () => MemoryStore.layer)
sessionSuite("memory", () => MemoryStore.layer)
