// The kubelet's image garbage collection, as Kubernetes 1.33's image manager
// (pkg/kubelet/images/image_gc_manager.go) and its loop (kubelet.go StartGarbageCollection) do it.
//
// Detection (every 5 minutes, and at the start of each collection) keeps a record per image ID of
// the runtime: when it was first detected, when it was last seen in use, its size and whether it
// is pinned. An image is in use when a container the runtime has (running or exited, of any pod)
// refers to it by its image reference. Images in use and pinned ones are never collected.
//
// A collection (every 5 minutes, ImageGCPeriod, from the kubelet's start):
//   1. imageMaximumGCAge, when set and the kubelet has run longer than it: every unused image not
//      used for longer than it is removed, whatever the disk use;
//   2. the image file system (CRI ImageFsInfo's mount point, its capacity and available space by
//      statfs): at a usage of imageGCHighThresholdPercent or more, unused images are removed, least
//      recently used first (then first detected first), skipping those first detected less than
//      imageMinimumGCAge ago, until capacity*(100-low)/100 - available bytes are freed. Too little
//      freed fails with the kubelet's text and a FreeDiskSpaceFailed event on the node.
// A failed collection is logged; a second failure in a row also gets an ImageGCFailed event.
// With a high threshold of 100 and no maximum age the loop does not run (detection still does).
//
// Pinning: the runtime pins images by CRI Image.pinned (containerd 1.7 and later pin their
// sandbox image). containerd 1.6 reports no pinning, so the runtime's sandbox image (containerd's
// `sandboxImage`, from its verbose Status) and --pod-infra-container-image are treated as pinned too.
//
// The eviction manager calls deleteUnusedImages() under a nodefs or imagefs threshold before it
// evicts pods (the kubelet's node-level reclaim).
import { statfsSync } from 'node:fs';
import type { Logger } from '../client/log.js';
import type { CRIClient } from './cri.js';
import { aggregate, goDuration } from './options.js';

/** the kubelet's ImageGCPeriod */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;
/** how often the image manager detects images between collections (its Start loop) */
export const IMAGE_DETECT_PERIOD_MS = 5 * 60_000;

export interface ImageGCPolicy {
  /** imageGCHighThresholdPercent: at this disk usage or more, collection frees space */
  highThresholdPercent: number;
  /** imageGCLowThresholdPercent: the usage collection frees space down to */
  lowThresholdPercent: number;
  /** imageMinimumGCAge in ms: an image first detected less than this ago is not removed for space */
  minAgeMs: number;
  /** imageMaximumGCAge in ms (0: off): an unused image not used for longer is removed */
  maxAgeMs: number;
}

/** the runtime calls the manager makes (CRIClient has them; tests give a fake) */
export type ImageGCRuntime = Pick<CRIClient, 'listImages' | 'listContainers' | 'removeImage' | 'imageFsInfo' | 'status'>;

export interface ImageGCOptions extends ImageGCPolicy {
  runtime: ImageGCRuntime;
  log: Logger;
  /** an event on the node (FreeDiskSpaceFailed, ImageGCFailed, InvalidDiskCapacity) */
  nodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** --pod-infra-container-image: kept as if pinned ('' for none) */
  sandboxImage?: string;
  /** the collection's period (default ImageGCPeriod, 5 minutes) */
  periodMs?: number;
  /** the detection's period (default 5 minutes) */
  detectPeriodMs?: number;
  /** the file system's capacity and available bytes at a path (default statfs) */
  statfs?: (path: string) => { capacity: number; available: number };
  /** the clock (ms) */
  now?: () => number;
  /**
   * KubeletEnsureSecretPulledImages' records (pullrecords.ts): at each detection, those of images
   * the runtime no longer has, last written before the runtime was asked, are removed
   * (PruneUnknownRecords); none with the gate off
   */
  pullRecords?: { pruneUnknownRecords(imageRefs: string[], until: number): void };
}

interface ImageRecord {
  /** when the image was first detected (ms) */
  firstDetected: number;
  /** when it was last seen in use (ms); 0: never (Go's zero time, before every other) */
  lastUsed: number;
  size: number;
  pinned: boolean;
}

interface Candidate extends ImageRecord {
  id: string;
}

/** a reference as the runtime names it: docker.io/library/ and :latest added where implied */
export function normalizeImageRef(ref: string): string {
  let r = ref.trim();
  if (r === '' || /^sha256:[0-9a-f]{64}$/.test(r)) return r;
  const slash = r.indexOf('/');
  const first = slash < 0 ? '' : r.slice(0, slash);
  if (slash < 0) r = `docker.io/library/${r}`;
  else if (!/[.:]/.test(first) && first !== 'localhost') r = `docker.io/${r}`;
  const name = r.slice(r.lastIndexOf('/') + 1);
  if (!name.includes(':') && !name.includes('@')) r += ':latest';
  return r;
}

function imageMatches(image: { id?: string; repoTags?: string[]; repoDigests?: string[] }, ref: string): boolean {
  if (!ref) return false;
  const n = normalizeImageRef(ref);
  return image.id === ref || [...(image.repoTags ?? []), ...(image.repoDigests ?? [])].some((t) => t === ref || t === n);
}

function statfsBytes(path: string): { capacity: number; available: number } {
  const s = statfsSync(path);
  return { capacity: s.blocks * s.bsize, available: s.bavail * s.bsize };
}

export class ImageGCManager {
  private readonly records = new Map<string, ImageRecord>();
  private readonly now: () => number;
  private gcTimer: NodeJS.Timeout | undefined;
  private detectTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** the one operation on the records at a time (collection, detection, deleteUnusedImages) */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ImageGCOptions) {
    this.now = o.now ?? Date.now;
  }

  /** starts detection every detectPeriodMs and the collection loop every periodMs, both at once */
  start(): void {
    this.stopped = false;
    const detect = () => {
      if (this.stopped) return;
      void this.serial(() => this.detectImages(this.now()))
        .catch((e) => this.o.log.info('Failed to monitor images', { err: (e as Error).message ?? String(e) }))
        .finally(() => {
          if (!this.stopped) this.detectTimer = setTimeout(detect, this.o.detectPeriodMs ?? IMAGE_DETECT_PERIOD_MS).unref();
        });
    };
    detect();
    if (this.o.highThresholdPercent >= 100 && this.o.maxAgeMs <= 0) {
      this.o.log.v(2).info('ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC');
      return;
    }
    const beganGC = this.now();
    let prevFailed = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.garbageCollect(beganGC).then(
        () => {
          this.o.log.v(prevFailed ? 1 : 4).info('Image garbage collection succeeded');
          prevFailed = false;
        },
        (e) => {
          const message = (e as Error).message ?? String(e);
          if (prevFailed) {
            this.o.log.error(e, 'Image garbage collection failed multiple times in a row');
            // (only repeated failures make an event)
            this.o.nodeEvent('Warning', 'ImageGCFailed', message);
          } else {
            this.o.log.error(e, 'Image garbage collection failed once. Stats initialization may not have completed yet');
          }
          prevFailed = true;
        },
      ).finally(() => {
        this.running = undefined;
        if (!this.stopped) this.gcTimer = setTimeout(loop, this.o.periodMs ?? IMAGE_GC_PERIOD_MS).unref();
      });
    };
    loop();
  }

  /** stops both loops and waits for a collection under way */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.gcTimer) clearTimeout(this.gcTimer);
    if (this.detectTimer) clearTimeout(this.detectTimer);
    await this.running;
    await this.chain.catch(() => undefined);
  }

  /** the image records (tests) */
  imageRecords(): ReadonlyMap<string, Readonly<ImageRecord>> {
    return this.records;
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.chain.then(f, f);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** the images the runtime's sandbox setting and --pod-infra-container-image name */
  private async sandboxImages(): Promise<string[]> {
    const out = this.o.sandboxImage ? [this.o.sandboxImage] : [];
    try {
      const info = (await this.o.runtime.status(true)).info ?? {};
      const cfg = info['config'] ? JSON.parse(info['config']) : undefined;
      if (typeof cfg?.sandboxImage === 'string' && cfg.sandboxImage) out.push(cfg.sandboxImage);
    } catch {
      /* a runtime that says nothing of its sandbox image pins it itself, or not at all */
    }
    return out;
  }

  /** updates the records from the runtime's images and containers; returns the image IDs in use */
  async detectImages(detectTime: number): Promise<Set<string>> {
    // (the records' prune keeps every record written from the start of this second on, their times
    // being whole seconds: a pull that ends while the runtime is asked is not forgotten)
    const listedAt = Math.floor(Date.now() / 1000) * 1000;
    const images = await this.o.runtime.listImages();
    this.o.pullRecords?.pruneUnknownRecords(images.map((i) => i.id ?? '').filter(Boolean), listedAt);
    const containers = await this.o.runtime.listContainers();
    const sandbox = await this.sandboxImages();
    const inUse = new Set<string>();
    for (const c of containers) {
      const ref = c.imageRef || c.image?.image || '';
      if (!ref) continue;
      this.o.log.v(5).info('Container uses image', { pod: `${c.labels?.['io.kubernetes.pod.namespace'] ?? ''}/${c.labels?.['io.kubernetes.pod.name'] ?? ''}`, containerName: c.metadata?.name ?? '', containerImage: c.image?.image ?? '', imageID: ref });
      inUse.add(ref);
    }
    const now = this.now();
    const current = new Set<string>();
    for (const image of images) {
      const id = image.id ?? '';
      if (!id) continue;
      current.add(id);
      let r = this.records.get(id);
      if (!r) {
        this.o.log.v(5).info('Image ID is new', { imageID: id, runtimeHandler: '' });
        r = { firstDetected: detectTime, lastUsed: 0, size: 0, pinned: false };
        this.records.set(id, r);
      }
      // (a container may name its image by a tag or digest rather than by ID)
      if (inUse.has(id) || [...(image.repoTags ?? []), ...(image.repoDigests ?? [])].some((t) => inUse.has(t))) {
        inUse.add(id);
        r.lastUsed = now;
      }
      r.size = Number(image.size ?? 0);
      r.pinned = !!image.pinned || sandbox.some((s) => imageMatches(image, s));
    }
    for (const id of [...this.records.keys()]) {
      if (!current.has(id)) {
        this.o.log.v(5).info('Image ID is no longer present; removing from imageRecords', { imageID: id });
        this.records.delete(id);
      }
    }
    return inUse;
  }

  /** detects, then the images that may be removed (neither in use nor pinned), least recently used
   * first, ties broken by the first detected */
  private async imagesInEvictionOrder(freeTime: number): Promise<Candidate[]> {
    const inUse = await this.detectImages(freeTime);
    const out: Candidate[] = [];
    for (const [id, r] of this.records) {
      if (inUse.has(id)) {
        this.o.log.v(5).info('Image ID is being used', { imageID: id });
        continue;
      }
      if (r.pinned) {
        this.o.log.v(5).info('Image is pinned, skipping garbage collection', { imageID: id });
        continue;
      }
      out.push({ id, ...r });
    }
    return out.sort((a, b) => (a.lastUsed !== b.lastUsed ? a.lastUsed - b.lastUsed : a.firstDetected - b.firstDetected));
  }

  private async freeImage(image: Candidate): Promise<void> {
    this.o.log.info('Removing image to free bytes', { imageID: image.id, size: image.size, runtimeHandler: '' });
    await this.o.runtime.removeImage({ image: image.id });
    this.records.delete(image.id);
  }

  /** removes images (in this order) until bytesToFree are freed; returns the bytes freed, or
   * throws when a removal failed */
  private async freeSpace(bytesToFree: number, freeTime: number, images: Candidate[]): Promise<number> {
    const errors: string[] = [];
    let freed = 0;
    for (const image of images) {
      this.o.log.v(5).info('Evaluating image ID for possible garbage collection based on disk usage', { imageID: image.id, runtimeHandler: '' });
      if (image.lastUsed >= freeTime) {
        this.o.log.v(5).info('Image ID was used too recently, not eligible for garbage collection', { imageID: image.id, lastUsed: new Date(image.lastUsed).toISOString(), freeTime: new Date(freeTime).toISOString() });
        continue;
      }
      // (an image just pulled is likely to be used by a container right away)
      if (freeTime - image.firstDetected < this.o.minAgeMs) {
        this.o.log.v(5).info("Image ID's age is less than the policy's minAge, not eligible for garbage collection", { imageID: image.id, age: goDuration(freeTime - image.firstDetected), minAge: goDuration(this.o.minAgeMs) });
        continue;
      }
      try {
        await this.freeImage(image);
      } catch (e) {
        errors.push((e as Error).message ?? String(e));
        continue;
      }
      freed += image.size;
      if (freed >= bytesToFree) break;
    }
    if (errors.length) throw new Error(`wanted to free ${bytesToFree} bytes, but freed ${freed} bytes space with errors in image deletion: ${aggregate(errors)}`);
    return freed;
  }

  /** imageMaximumGCAge: removes the images not used for longer than it, once the kubelet has run
   * longer than it; returns the images left */
  private async freeOldImages(images: Candidate[], freeTime: number, beganGC: number): Promise<Candidate[]> {
    if (this.o.maxAgeMs <= 0) return images;
    // (before that, an image's last use may have been before the kubelet's start)
    if (freeTime - beganGC <= this.o.maxAgeMs) return images;
    const errors: string[] = [];
    const remaining: Candidate[] = [];
    for (const image of images) {
      this.o.log.v(5).info('Evaluating image ID for possible garbage collection based on image age', { imageID: image.id });
      if (freeTime - image.lastUsed > this.o.maxAgeMs) {
        try {
          await this.freeImage(image);
        } catch (e) {
          errors.push((e as Error).message ?? String(e));
          remaining.push(image);
        }
        continue;
      }
      remaining.push(image);
    }
    if (errors.length) throw new Error(`wanted to free images older than ${goDuration(this.o.maxAgeMs)}, encountered errors in image deletion: ${aggregate(errors)}`);
    return remaining;
  }

  /** the image file system's capacity and available bytes, as the kubelet's CRI stats provider finds them */
  private async imageFsStats(): Promise<{ capacity: number; available: number }> {
    const info = await this.o.runtime.imageFsInfo();
    const fs = info.imageFilesystems?.[0];
    if (!fs) throw new Error('imageFs information is unavailable');
    const mountpoint = fs.fsId?.mountpoint ?? '';
    try {
      return (this.o.statfs ?? statfsBytes)(mountpoint);
    } catch (e) {
      throw new Error(`failed to get device for dir ${JSON.stringify(mountpoint)}: ${(e as Error).message}`);
    }
  }

  /** one collection: by maximum age, then by disk use (the kubelet's GarbageCollect) */
  garbageCollect(beganGC: number): Promise<void> {
    return this.serial(async () => {
      const freeTime = this.now();
      let images = await this.imagesInEvictionOrder(freeTime);
      images = await this.freeOldImages(images, freeTime, beganGC);
      const stats = await this.imageFsStats();
      const capacity = stats.capacity;
      let available = stats.available;
      if (available > capacity) {
        this.o.log.info('Availability is larger than capacity', { available, capacity });
        available = capacity;
      }
      if (capacity === 0) {
        const message = 'invalid capacity 0 on image filesystem';
        this.o.nodeEvent('Warning', 'InvalidDiskCapacity', message);
        throw new Error(message);
      }
      // (Go's integer arithmetic)
      const usagePercent = 100 - Number((BigInt(available) * 100n) / BigInt(capacity));
      if (usagePercent >= this.o.highThresholdPercent) {
        const amountToFree = Number((BigInt(capacity) * BigInt(100 - this.o.lowThresholdPercent)) / 100n) - available;
        this.o.log.info('Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold', { usage: usagePercent, highThreshold: this.o.highThresholdPercent, amountToFree, lowThreshold: this.o.lowThresholdPercent });
        const freed = await this.freeSpace(amountToFree, freeTime, images);
        if (freed < amountToFree) {
          const message = `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freed} bytes eligible to free.`;
          this.o.nodeEvent('Warning', 'FreeDiskSpaceFailed', message);
          throw new Error(message);
        }
      }
    });
  }

  /** removes every unused image past the minimum age (the eviction manager's node-level reclaim) */
  deleteUnusedImages(): Promise<void> {
    return this.serial(async () => {
      this.o.log.info('Attempting to delete unused images');
      const freeTime = this.now();
      const images = await this.imagesInEvictionOrder(freeTime);
      await this.freeSpace(Number.MAX_SAFE_INTEGER, freeTime, images);
    });
  }
}
