import { MemoryStore, storageSuite } from "@dashstream/core/testing"

storageSuite("memory", () => MemoryStore.layer)
