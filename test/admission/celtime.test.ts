// CEL timestamps and durations (src/apiserver/admission/celtime.ts through the interpreter of
// cel.ts): parsing as cel-go parses (RFC 3339, Go durations), arithmetic, comparisons, string() and
// int(), the accessors with time zones, and the range errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateCELValue } from '../../src/apiserver/admission/cel.js';
import { parseDuration, parseTimestamp } from '../../src/apiserver/admission/celtime.js';

const ev = (e: string) => evaluateCELValue(e, {});

test('Go durations and RFC 3339 timestamps parse as Go parses them', () => {
  assert.equal(parseDuration('1h30m'), 5_400_000_000_000n);
  assert.equal(parseDuration('1.5s'), 1_500_000_000n);
  assert.equal(parseDuration('-2m3.5s'), -123_500_000_000n);
  assert.equal(parseDuration('300ms'), 300_000_000n);
  assert.equal(parseDuration('1µs'), 1000n);
  assert.equal(parseDuration('0'), 0n);
  for (const bad of ['', '1', 'h', '1d', '.s', '3000000h']) assert.equal(parseDuration(bad), undefined, bad);
  assert.equal(parseTimestamp('1970-01-01T00:00:01.5Z'), 1_500_000_000n);
  assert.equal(parseTimestamp('1970-01-01T01:00:00+01:00'), 0n);
  for (const bad of ['2026-02-30T00:00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z']) assert.equal(parseTimestamp(bad), undefined, bad);
});

test('arithmetic, comparisons and conversions', () => {
  assert.equal(ev("timestamp('2026-12-04T10:00:00Z') < timestamp('2026-12-04T11:00:00+00:30')"), true);
  assert.equal(ev("string(timestamp('2026-12-04T10:00:00.500Z') + duration('1h30m'))"), '2026-12-04T11:30:00.5Z');
  assert.equal(ev("timestamp('2026-12-04T10:00:00Z') - timestamp('2026-12-04T09:00:00Z') == duration('1h')"), true);
  assert.equal(ev("string(duration('1h30m'))"), '5400s');
  assert.equal(ev("string(-duration('1.5s'))"), '-1.5s');
  assert.equal(ev("duration('1h') > duration('59m59s')"), true);
  assert.equal(ev("int(timestamp('1970-01-01T00:01:00Z'))"), 60n);
  assert.equal(ev("int(timestamp('1969-12-31T23:59:59.5Z'))"), -1n);
  assert.equal(ev("string(timestamp(86400))"), '1970-01-02T00:00:00Z');
  assert.equal(ev("string(timestamp('0001-01-01T00:00:00Z'))"), '0001-01-01T00:00:00Z');
  assert.throws(() => ev("timestamp('9999-12-31T23:59:59Z') + duration('1s')"), /timestamp out of range/);
  assert.throws(() => ev("timestamp('bad')"), /not a valid timestamp/);
  assert.throws(() => ev("duration('1h') + 1"), /no such overload/);
});

test('accessors: totals of a duration, calendar fields of a timestamp in UTC, an IANA zone or an offset', () => {
  assert.equal(ev("duration('90m').getHours()"), 1n);
  assert.equal(ev("duration('-1.5h').getMinutes()"), -90n);
  assert.equal(ev("duration('2.5s').getMilliseconds()"), 2500n);
  const t = "timestamp('2026-03-01T23:20:30.123Z')";
  assert.deepEqual(
    ['getFullYear()', 'getMonth()', 'getDate()', 'getDayOfMonth()', 'getDayOfWeek()', 'getDayOfYear()', 'getHours()', 'getMinutes()', 'getSeconds()', 'getMilliseconds()'].map((m) => ev(`${t}.${m}`)),
    [2026n, 2n, 1n, 0n, 0n, 59n, 23n, 20n, 30n, 123n],
  );
  assert.equal(ev(`${t}.getDate('America/Los_Angeles')`), 1n);
  assert.equal(ev(`${t}.getHours('America/Los_Angeles')`), 15n);
  assert.equal(ev(`${t}.getHours('+05:30')`), 4n);
  assert.equal(ev(`${t}.getDate('+05:30')`), 2n);
  assert.throws(() => ev(`${t}.getHours('Nowhere/City')`), /unknown time zone/);
});
