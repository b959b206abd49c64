// When a cron schedule fires (schema/validation/cron.ts parseSchedule): robfig/cron v3's
// SpecSchedule.Next, which the CronJob controller runs on: fields with names, ranges, steps and
// '?', day-of-month OR day-of-week unless one is '*', the descriptors, @every, time zones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSchedule } from '../../src/schema/validation/cron.js';

const t0 = Date.parse('2026-12-05T12:34:56Z'); // a Saturday
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString().replace('.000Z', 'Z'));
function nexts(spec: string, zone?: string, n = 2): (string | undefined)[] {
  const s = parseSchedule(spec);
  const out: (string | undefined)[] = [];
  let t: number | undefined = t0;
  for (let i = 0; i < n && t !== undefined; i++) out.push(iso((t = s.next(t, zone))));
  return out;
}

test('the five fields: steps, ranges, lists, names, and the next whole minute after the time given', () => {
  assert.deepEqual(nexts('*/5 * * * *'), ['2026-12-05T12:35:00Z', '2026-12-05T12:40:00Z']);
  assert.deepEqual(nexts('0 0 * * *'), ['2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z']);
  assert.deepEqual(nexts('0 9 * * 1-5'), ['2026-12-07T09:00:00Z', '2026-12-08T09:00:00Z']);
  assert.deepEqual(nexts('0 9 * * MON,fri'), ['2026-12-07T09:00:00Z', '2026-12-11T09:00:00Z']);
  assert.deepEqual(nexts('30 2 1 * *'), ['2027-01-01T02:30:00Z', '2027-02-01T02:30:00Z']);
  assert.deepEqual(nexts('15 10-12/2 * jan ?'), ['2027-01-01T10:15:00Z', '2027-01-01T12:15:00Z']);
  assert.deepEqual(nexts('34 12 * * *'), ['2026-12-06T12:34:00Z', '2026-12-07T12:34:00Z'], 'the current minute has begun: the next one');
});

test('day of month and day of week: either when both are restricted, both when one is *', () => {
  // the 13th or a Friday
  assert.deepEqual(nexts('0 0 13 * 5', undefined, 3), ['2026-12-11T00:00:00Z', '2026-12-13T00:00:00Z', '2026-12-18T00:00:00Z']);
  // every day of the week on the 13th (a step of 1 over all days keeps '*' semantics: AND)
  assert.deepEqual(nexts('0 0 13 * *'), ['2026-12-13T00:00:00Z', '2027-01-13T00:00:00Z']);
  // a step over days of the week is a restriction: OR with the 13th
  assert.deepEqual(nexts('0 0 13 * */2', undefined, 3), ['2026-12-06T00:00:00Z', '2026-12-08T00:00:00Z', '2026-12-10T00:00:00Z']);
  assert.deepEqual(nexts('0 0 29 2 *'), ['2028-02-29T00:00:00Z', '2032-02-29T00:00:00Z']);
  assert.deepEqual(nexts('0 0 30 2 *', undefined, 1), [undefined], 'never: none within five years');
});

test('descriptors and @every', () => {
  assert.deepEqual(nexts('@hourly'), ['2026-12-05T13:00:00Z', '2026-12-05T14:00:00Z']);
  assert.deepEqual(nexts('@daily'), ['2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z']);
  assert.deepEqual(nexts('@weekly'), ['2026-12-06T00:00:00Z', '2026-12-13T00:00:00Z']);
  assert.deepEqual(nexts('@monthly'), ['2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z']);
  assert.deepEqual(nexts('@yearly'), ['2027-01-01T00:00:00Z', '2028-01-01T00:00:00Z']);
  assert.deepEqual(nexts('@every 90s'), ['2026-12-05T12:36:26Z', '2026-12-05T12:37:56Z']);
  assert.deepEqual(nexts('@every 1500ms'), ['2026-12-05T12:34:57Z', '2026-12-05T12:34:58Z'], 'rounded down to whole seconds');
});

test('time zones: the zone given, a TZ= or CRON_TZ= prefix, daylight saving time', () => {
  assert.deepEqual(nexts('0 12 * * *', 'Europe/Paris'), ['2026-12-06T11:00:00Z', '2026-12-07T11:00:00Z']);
  assert.deepEqual(nexts('TZ=America/New_York 0 9 * * *', 'Europe/Paris'), ['2026-12-05T14:00:00Z', '2026-12-06T14:00:00Z']);
  assert.deepEqual(nexts('CRON_TZ=Asia/Kolkata 30 18 * * *'), ['2026-12-05T13:00:00Z', '2026-12-06T13:00:00Z']);
  // 03:00 in Berlin across the end of summer time (2027-10-31: UTC+2 to UTC+1)
  const s = parseSchedule('0 3 * * *');
  const before = Date.parse('2027-10-30T12:00:00Z');
  const a = s.next(before, 'Europe/Berlin')!;
  assert.equal(iso(a), '2027-10-31T02:00:00Z');
  assert.equal(iso(s.next(a, 'Europe/Berlin')), '2027-11-01T02:00:00Z');
});

test('a schedule Kubernetes refuses throws robfig\'s words', () => {
  assert.throws(() => parseSchedule('61 * * * *'), /end of range \(61\) above maximum \(59\): 61/);
  assert.throws(() => parseSchedule('* * *'), /expected exactly 5 fields, found 3/);
  assert.throws(() => parseSchedule('@fortnightly'), /unrecognized descriptor: @fortnightly/);
});
