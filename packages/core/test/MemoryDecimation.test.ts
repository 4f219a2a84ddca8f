import { decimationSuite, MemoryStore } from "@dashstream/core/testing"

decimationSuite("memory", () => MemoryStore.layer)
