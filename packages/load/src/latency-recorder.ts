// Weighted latency samples: one sample per batch (or request) with the
// number of records it stands for, so percentiles are per record while the
// recorder stores one entry per batch. Preallocated typed arrays that double
// when full; percentiles by sorting sample indices once at the end.

import { assert } from '@seglog/common';

export interface LatencySummary {
  /** Records the samples stand for. */
  readonly count: number;
  readonly samples: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
}

export class LatencyRecorder {
  private latencies: Float64Array;
  private weights: Uint32Array;
  private size: number;

  constructor(initialSamples = 4096) {
    assert(Number.isInteger(initialSamples) && initialSamples > 0, 'LatencyRecorder: initialSamples must be positive');
    this.latencies = new Float64Array(initialSamples);
    this.weights = new Uint32Array(initialSamples);
    this.size = 0;
  }

  record(latencyMs: number, weight: number): void {
    assert(latencyMs >= 0, 'LatencyRecorder.record: negative latency');
    assert(Number.isInteger(weight) && weight > 0, 'LatencyRecorder.record: weight must be a positive integer');
    if (this.size === this.latencies.length) this.grow();
    this.latencies[this.size] = latencyMs;
    this.weights[this.size] = weight;
    this.size++;
  }

  /** Adds every sample of `other` (one recorder per producer, merged for the report). */
  merge(other: LatencyRecorder): void {
    for (let i = 0; i < other.size; i++) this.record(other.latencies[i] as number, other.weights[i] as number);
  }

  summary(): LatencySummary {
    const order = Array.from({ length: this.size }, (_, i) => i);
    const lat = this.latencies;
    order.sort((a, b) => (lat[a] as number) - (lat[b] as number));
    let total = 0;
    let sum = 0;
    for (let i = 0; i < this.size; i++) {
      total += this.weights[i] as number;
      sum += (lat[i] as number) * (this.weights[i] as number);
    }
    const at = (q: number): number => {
      if (total === 0) return 0;
      const rank = Math.ceil(q * total);
      let seen = 0;
      for (const i of order) {
        seen += this.weights[i] as number;
        if (seen >= rank) return lat[i] as number;
      }
      return lat[order[order.length - 1] as number] as number;
    };
    return {
      count: total, samples: this.size, meanMs: total === 0 ? 0 : sum / total,
      p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999), maxMs: at(1),
    };
  }

  private grow(): void {
    const latencies = new Float64Array(this.latencies.length * 2);
    latencies.set(this.latencies);
    const weights = new Uint32Array(this.weights.length * 2);
    weights.set(this.weights);
    this.latencies = latencies;
    this.weights = weights;
  }
}
