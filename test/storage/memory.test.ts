import { MemoryBackend } from '../../src/storage/memory.js';
import { conformance } from './conformance.js';

conformance('memory', {
  async create() {
    const b = new MemoryBackend();
    await b.open();
    return b;
  },
});
