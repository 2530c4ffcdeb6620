/**
 * Ring-buffer timestamps recorded with the x86-tsc clock, converted to
 * nanoseconds as trace-cmd converts them when the file has a TSC2NSEC
 * option (`trace-cmd record -C tsc2nsec`, host and guest tracing): ns =
 * (cycles * mult) >> shift, exactly (trace-cmd's mul_u64_u32_shr). The
 * option's offset is not applied: trace-cmd 3.1 reports the same times
 * whatever it holds (checked by tsc_to_ns.test.ts against `trace-cmd
 * report`); it is kept in trace_info.
 *
 * Records hold timestamps relative to a base (ring_buffer_page.ts): each
 * becomes ns(base + rel) - ns(base), computed with BigInt. Only such files
 * pay for it.
 */
import type { TsBase } from './ring_buffer_page.ts';

export interface Tsc2Nsec {
  mult: number;
  shift: number;
  offset: bigint;
}

export class TscToNs {
  private readonly mult: bigint;
  private readonly shift: bigint;
  private base = 0n;
  private baseNs = 0n;

  constructor(readonly option: Tsc2Nsec) {
    this.mult = BigInt(option.mult);
    this.shift = BigInt(option.shift);
  }

  /** ns of an absolute cycle count. */
  ns(cycles: bigint): bigint {
    return (cycles * this.mult) >> this.shift;
  }

  /** The base the records' timestamps are relative to (in cycles). */
  setBase(base: TsBase): void {
    this.base = (BigInt(base.hi) << 32n) | BigInt(base.lo);
    this.baseNs = this.ns(this.base);
  }

  /** ns of the base: the trace's tsBaseNs (before its OFFSET option). */
  get baseInNs(): bigint {
    return this.baseNs;
  }

  /** ts[0, count): cycles relative to the base -> ns relative to the base in ns. */
  convert(ts: Float64Array, count: number): void {
    for (let i = 0; i < count; i++) ts[i] = Number(this.ns(this.base + BigInt(ts[i]!)) - this.baseNs);
  }
}
