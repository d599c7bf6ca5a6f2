// api/params/shadow.ts + shadow-fields.ts: remove.bg's shadow fields resolved into one ShadowOptions,
// through parseRemoveRequest as the HTTP API calls it, for every row of the documented tables.
import t from 'tap';
import { ApiError } from '../../src/api/errors.js';
import { parseRemoveRequest } from '../../src/api/params/remove-request.js';
import { AUTO_SHADOW_TYPE, autoShadowOpacity, foregroundClass, resolveShadow, type ForegroundClass } from '../../src/api/params/shadow.js';
import type { RawValue } from '../../src/http/fields.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
const shadowOf = (extra: Record<string, RawValue>) =>
  parseRemoveRequest(new Map<string, RawValue>([['image_file', { kind: 'file', data: PNG }], ...Object.entries(extra)])).options.shadow;

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return undefined;
}

const TYPES = ['person', 'product', 'car', 'animal', 'graphic', 'transportation'] as const;

t.test('no field, none, opacity 0: no shadow, and no shadow key at all', async (t) => {
  const plain = parseRemoveRequest(new Map<string, RawValue>([['image_file', { kind: 'file', data: PNG }]]));
  t.notOk('shadow' in plain.options, 'absent when no field is given');
  for (const fields of [
    {},
    { shadow_type: 'none' },
    { shadow_type: 'NONE' },
    { shadow_opacity: '30' },
    { shadow_type: 'drop', shadow_opacity: '0' },
    { shadow_type: 'drop', shadow_opacity: 0 },
    { add_shadow: 'false' },
  ]) {
    const r = parseRemoveRequest(new Map<string, RawValue>([['image_file', { kind: 'file', data: PNG }], ...Object.entries(fields)]));
    t.same(r, plain, JSON.stringify(fields));
  }
});

t.test('a plain kind applies to every class; opacity auto is 90 for a car and 50 for every other class', async (t) => {
  t.same(shadowOf({ shadow_type: 'drop' }), { type: 'drop', opacity: 50 }, 'type=auto is class other');
  t.same(shadowOf({ shadow_type: '3d' }), { type: '3D', opacity: 50 }, 'any case');
  t.same(shadowOf({ shadow_type: 'car', type: 'car' }), { type: 'car', opacity: 90 });
  t.same(shadowOf({ shadow_type: 'car' }), { type: 'car', opacity: 50 }, 'the kind does not set the auto opacity, the class does');
  for (const type of TYPES) {
    t.same(shadowOf({ shadow_type: 'drop', type }), { type: 'drop', opacity: type === 'car' ? 90 : 50 }, type);
    t.same(shadowOf({ shadow_type: 'drop', type, shadow_opacity: 'auto' }), { type: 'drop', opacity: type === 'car' ? 90 : 50 }, `${type}, opacity auto`);
  }
  t.same(shadowOf({ shadow_type: 'drop', shadow_opacity: '1' }), { type: 'drop', opacity: 1 });
  t.same(shadowOf({ shadow_type: 'drop', shadow_opacity: 100 }), { type: 'drop', opacity: 100 }, 'a JSON number');
});

t.test('shadow_type=auto resolves by class; type=auto is other → drop', async (t) => {
  const want: Record<string, string> = { auto: 'drop', car: 'car', product: 'drop', person: '3D', animal: 'drop', transportation: '3D', graphic: 'drop' };
  for (const [type, kind] of Object.entries(want)) {
    t.same(shadowOf({ shadow_type: 'auto', type }), { type: kind, opacity: type === 'car' ? 90 : 50 }, `type=${type}`);
  }
  t.same(AUTO_SHADOW_TYPE, { car: 'car', product: 'drop', person: '3D', animal: 'drop', transportation: '3D', graphic: 'drop', other: 'drop' });
  t.equal(foregroundClass('auto'), 'other');
  t.equal(autoShadowOpacity('car'), 90);
  t.equal(autoShadowOpacity('other'), 50);
});

t.test('per class: the class value applies, a class without one gets none, a plain value fills the rest', async (t) => {
  t.same(shadowOf({ 'shadow_type[car]': 'car', type: 'car' }), { type: 'car', opacity: 90 }, 'form');
  t.same(shadowOf({ shadow_type: { car: 'car' }, type: 'car' }), { type: 'car', opacity: 90 }, 'JSON object');
  t.equal(shadowOf({ 'shadow_type[car]': 'car', type: 'person' }), undefined, 'another class: none');
  t.equal(shadowOf({ 'shadow_type[car]': 'car' }), undefined, 'type=auto (other): none');
  t.same(shadowOf({ 'shadow_type[other]': 'drop' }), { type: 'drop', opacity: 50 }, 'type=auto matches other');
  t.same(shadowOf({ 'shadow_type[graphics]': '3D', type: 'graphic' }), { type: '3D', opacity: 50 }, 'graphics names graphic');
  t.equal(shadowOf({ 'shadow_type[car_part]': 'drop', type: 'car' }), undefined, 'car_part is never a request class');
  t.same(shadowOf({ shadow_type: 'drop', 'shadow_type[car]': 'car', type: 'car' }), { type: 'car', opacity: 90 }, 'class value wins');
  t.same(shadowOf({ shadow_type: 'drop', 'shadow_type[car]': 'car', type: 'animal' }), { type: 'drop', opacity: 50 }, 'plain fills the rest');
  t.equal(shadowOf({ shadow_type: 'drop', 'shadow_type[person]': 'none', type: 'person' }), undefined, 'a class may turn it off');
  t.same(shadowOf({ 'shadow_type[person]': 'auto', type: 'person' }), { type: '3D', opacity: 50 }, 'auto per class');
  t.same(shadowOf({ shadow_type: 'drop', 'shadow_opacity[product]': '20', shadow_opacity: '70', type: 'product' }), { type: 'drop', opacity: 20 });
  t.same(shadowOf({ shadow_type: 'drop', 'shadow_opacity[product]': '20', shadow_opacity: '70', type: 'person' }), { type: 'drop', opacity: 70 });
  t.same(shadowOf({ shadow_type: 'drop', 'shadow_opacity[product]': '20', type: 'person' }), { type: 'drop', opacity: 50 }, 'no value for the class: auto');
  t.same(shadowOf({ shadow_type: 'car', shadow_opacity: { car: 'auto', person: 10 }, type: 'car' }), { type: 'car', opacity: 90 });
  t.equal(shadowOf({ shadow_type: 'drop', 'shadow_opacity[animal]': '0', type: 'animal' }), undefined, 'opacity 0 per class');
});

t.test('add_shadow=true means shadow_type[car]=car', async (t) => {
  t.same(shadowOf({ add_shadow: 'true', type: 'car' }), { type: 'car', opacity: 90 });
  t.same(shadowOf({ add_shadow: true, type: 'car', shadow_opacity: '40' }), { type: 'car', opacity: 40 });
  t.equal(shadowOf({ add_shadow: 'true' }), undefined, 'type=auto is other: no shadow');
  t.equal(shadowOf({ add_shadow: 'true', type: 'product' }), undefined);
  t.same(shadowOf({ add_shadow: 'true', shadow_type: 'drop', type: 'car' }), { type: 'car', opacity: 90 }, 'as a class value, it wins over a plain one');
  t.equal(shadowOf({ add_shadow: 'true', 'shadow_type[car]': 'none', type: 'car' }), undefined, 'an explicit shadow_type[car] wins');
});

t.test('bad values keep their codes and messages', async (t) => {
  t.equal(
    code(() => shadowOf({ shadow_type: 'long' })),
    'invalid_shadow_type',
  );
  t.equal(
    code(() => shadowOf({ 'shadow_type[car]': 'sideways' })),
    'invalid_shadow_type',
  );
  t.equal(
    code(() => shadowOf({ 'shadow_type[spaceship]': 'car' })),
    'invalid_shadow_type',
  );
  t.equal(
    code(() => shadowOf({ shadow_type: { spaceship: 'car' } })),
    'invalid_shadow_type',
  );
  t.equal(
    code(() => shadowOf({ shadow_opacity: '101' })),
    'invalid_shadow_opacity',
  );
  t.equal(
    code(() => shadowOf({ shadow_opacity: '50.5' })),
    'invalid_shadow_opacity',
  );
  t.equal(
    code(() => shadowOf({ 'shadow_opacity[car]': '-1' })),
    'invalid_shadow_opacity',
  );
  t.equal(
    code(() => shadowOf({ add_shadow: 'yes' })),
    'invalid_add_shadow',
  );
  t.throws(() => shadowOf({ shadow_type: 'long' }), {
    code: 'invalid_shadow_type',
    detail: "Expected one of car, 3D, drop, none, auto for shadow_type but received 'long'",
  });
});

t.test('resolveShadow alone: every class without fields gets none', async (t) => {
  const classes: ForegroundClass[] = ['person', 'product', 'car', 'animal', 'transportation', 'graphic', 'other'];
  for (const cls of classes) {
    t.equal(resolveShadow({ addShadow: false, type: { byClass: {} }, opacity: { byClass: {} } }, cls), undefined, cls);
    t.same(resolveShadow({ addShadow: false, type: { all: 'auto', byClass: {} }, opacity: { byClass: {} } }, cls), {
      type: AUTO_SHADOW_TYPE[cls],
      opacity: autoShadowOpacity(cls),
    });
  }
});
