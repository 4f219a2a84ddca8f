import { alertStoreSuite, MemoryStore } from "@dashstream/core/testing"

alertStoreSuite("memory", () => MemoryStore.layer, { sharedByProcesses: false })
