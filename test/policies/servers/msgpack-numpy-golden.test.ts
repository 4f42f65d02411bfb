/**
 * Golden bytes against the real Python codecs (openpi_client.msgpack_numpy, vla_eval.protocol.numpy_codec) in
 * .venvs/policies, both ways: IMEP's packWire writes the very bytes the Python packers write for the same values,
 * the Python decoders rebuild IMEP's bytes into equal values, and IMEP decodes what only Python writes (numpy
 * scalars, raw images) and refuses a png image and a big-endian array in one line. Skips when the venv is absent.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packWire, unpackWire, unpackWireMap, type NumpyDialect } from '../../../src/policies/servers/index.js';
import { POLICIES_PYTHON, POLICIES_VENV_MISSING, REPO_ROOT } from '../../helpers/policy-server.js';
import { comparable, goldenCases } from './wire-cases.js';

interface GoldenOut {
  readonly py: Record<NumpyDialect, Record<string, string>>;
  readonly roundtrip: Record<NumpyDialect, Record<string, boolean>>;
  readonly decoded: Record<string, string>;
}

const DIALECTS: readonly NumpyDialect[] = ['openpi', 'vla-eval'];

function runPython(): GoldenOut {
  const cases = goldenCases();
  const ts = Object.fromEntries(
    DIALECTS.map((d) => [
      d,
      Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, Buffer.from(packWire(v, d)).toString('hex')])),
    ]),
  );
  const r = spawnSync(POLICIES_PYTHON, [resolve(REPO_ROOT, 'test/policies/servers/fixtures/msgpack_numpy_golden.py')], {
    input: JSON.stringify({ ts }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`golden script failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as GoldenOut;
}

describe.skipIf(POLICIES_VENV_MISSING !== undefined)(
  `msgpack-numpy golden bytes vs the Python codecs${POLICIES_VENV_MISSING ? ` (skipped: ${POLICIES_VENV_MISSING})` : ''}`,
  () => {
    const out = POLICIES_VENV_MISSING === undefined ? runPython() : undefined;
    const cases = goldenCases();
    for (const dialect of DIALECTS) {
      for (const name of Object.keys(cases)) {
        it(`${dialect} ${name}: IMEP's bytes are the Python packer's, and each side decodes the other's`, () => {
          const py = out!.py[dialect][name]!;
          expect(Buffer.from(packWire(cases[name]!, dialect)).toString('hex')).toBe(py);
          expect(out!.roundtrip[dialect][name]).toBe(true);
          expect(comparable(unpackWire(Buffer.from(py, 'hex')))).toEqual(comparable(cases[name]!));
        });
      }
    }
    it('numpy scalars from openpi decode to 0-d arrays of their dtype', () => {
      expect(comparable(unpackWireMap(Buffer.from(out!.decoded['npgeneric']!, 'hex')))).toEqual({
        f32: { dtype: 'float32', shape: [], hex: '0000003f' },
        i64: { dtype: 'int64', shape: [], hex: 'fdffffffffffffff' },
        b: { dtype: 'bool', shape: [], hex: '01' },
        f16: { dtype: 'float16', shape: [], hex: '003e' },
        u8: { dtype: 'uint8', shape: [], hex: '07' },
      });
    });
    it("vla-eval's raw image decodes to its array; a png image and a big-endian array are refused in one line", () => {
      expect(comparable(unpackWireMap(Buffer.from(out!.decoded['image_raw']!, 'hex')))).toEqual({
        img: {
          dtype: 'uint8',
          shape: [4, 3, 3],
          hex: Buffer.from(Array.from({ length: 36 }, (_, i) => i)).toString('hex'),
        },
      });
      expect(() => unpackWire(Buffer.from(out!.decoded['image_png']!, 'hex'), 'reply')).toThrow(
        'reply.img: image in format "png": IMEP reads raw images only (start the server with the raw image format)',
      );
      expect(() => unpackWire(Buffer.from(out!.decoded['big_endian']!, 'hex'), 'reply')).toThrow(
        'reply: big-endian numpy dtype ">f4": IMEP reads little-endian arrays only',
      );
    });
  },
);
