// `--device auto|cpu|cuda[:N]` (CUTOUT_DEVICE, createRemover({ device })) as text → a request. Pure, so
// config parsing can use it; device/device.ts probes what the request can get.

export type DeviceKind = 'cpu' | 'cuda';

export interface DeviceRequest {
  kind: 'auto' | DeviceKind;
  /** GPU index for cuda (cuda:N); 0 otherwise. */
  index: number;
}

export class DeviceError extends Error {
  readonly code = 'ERR_CUTOUT_DEVICE';
  constructor(message: string) {
    super(message);
    this.name = 'DeviceError';
  }
}

/** `auto`, `cpu`, `cuda`, `cuda:N` (any case). */
export function parseDevice(text: string | undefined): DeviceRequest {
  const v = (text ?? 'auto').trim().toLowerCase();
  if (v === '' || v === 'auto') return { kind: 'auto', index: 0 };
  if (v === 'cpu') return { kind: 'cpu', index: 0 };
  const m = /^cuda(?::(\d{1,2}))?$/.exec(v);
  if (m) return { kind: 'cuda', index: Number(m[1] ?? 0) };
  throw new DeviceError(`Expected auto, cpu, cuda or cuda:N for device but received '${text}'`);
}
