import { changeFeedSuite, dashboardSuite, MemoryStore, storageSuite } from "@dashstream/core/testing"

storageSuite("memory", () => MemoryStore.layer)
dashboardSuite("memory", () => MemoryStore.layer)
changeFeedSuite("memory", () => MemoryStore.layer)
