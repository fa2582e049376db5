// The policy-value net of nets/model.py (arch "conv3") on typed arrays: no library, no download.
//
//   conv3x3 4->32->64->128, ReLU; policy: conv1x1 128->4, ReLU, FC 4*H*W -> H*W, log-softmax;
//   value: conv1x1 128->2, ReLU, FC 2*H*W -> 64, ReLU, FC 64 -> 1, tanh.
//
// The weights come as model.json (names, shapes and offsets of torch's state dict, in torch's own
// layouts) and weights.bin (little-endian float32), written by gomoku/web/export.py. At load the
// 3x3 kernels are rearranged to [in channel][kh][kw][out channel], so that the trunk runs as a
// scatter over the input's non-zero activations (ReLU leaves about half of them at zero, and the
// input planes are mostly zero) with a contiguous inner loop over output channels. Activations are
// stored point-major ([point][channel]) in float64: sums are at least as exact as torch's float32.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  /** Names and shapes of the state dict of a conv3 net for boards of `S` points. */
  function conv3Shapes(S) {
    return {
      "conv1.weight": [32, 4, 3, 3], "conv1.bias": [32],
      "conv2.weight": [64, 32, 3, 3], "conv2.bias": [64],
      "conv3.weight": [128, 64, 3, 3], "conv3.bias": [128],
      "heads.policy_conv.weight": [4, 128, 1, 1], "heads.policy_conv.bias": [4],
      "heads.policy_fc.weight": [S, 4 * S], "heads.policy_fc.bias": [S],
      "heads.value_conv.weight": [2, 128, 1, 1], "heads.value_conv.bias": [2],
      "heads.value_fc1.weight": [64, 2 * S], "heads.value_fc1.bias": [64],
      "heads.value_fc2.weight": [1, 64], "heads.value_fc2.bias": [1],
    };
  }

  class Net {
    /** meta: the parsed model.json; buffer: the ArrayBuffer of weights.bin. */
    constructor(meta, buffer) {
      if (meta.arch !== "conv3") throw new Error(`unsupported net architecture ${meta.arch}`);
      const W = (this.width = meta.width), H = (this.height = meta.height);
      const S = (this.size = W * H);
      const floats = new Float32Array(buffer);
      const shapes = conv3Shapes(S);
      const get = (name) => {
        const t = meta.tensors[name];
        if (!t) throw new Error(`model.json has no tensor ${name}`);
        const want = shapes[name];
        if (t.shape.join() !== want.join()) {
          throw new Error(`tensor ${name} has shape ${t.shape}, expected ${want}`);
        }
        const n = want.reduce((a, b) => a * b, 1);
        if (t.offset + n > floats.length) throw new Error(`weights.bin is too short for ${name}`);
        return Float64Array.from(floats.subarray(t.offset, t.offset + n));
      };
      const kernel = (name, cout, cin) => {  // torch [co][ci][kh][kw] -> [ci][kh][kw][co]
        const w = get(name), out = new Float64Array(w.length);
        for (let co = 0; co < cout; co++)
          for (let ci = 0; ci < cin; ci++)
            for (let k = 0; k < 9; k++) out[(ci * 9 + k) * cout + co] = w[(co * cin + ci) * 9 + k];
        return out;
      };
      this.conv = [
        { cin: 4, cout: 32, w: kernel("conv1.weight", 32, 4), b: get("conv1.bias") },
        { cin: 32, cout: 64, w: kernel("conv2.weight", 64, 32), b: get("conv2.bias") },
        { cin: 64, cout: 128, w: kernel("conv3.weight", 128, 64), b: get("conv3.bias") },
      ];
      this.pConvW = get("heads.policy_conv.weight"); this.pConvB = get("heads.policy_conv.bias");
      this.pFcW = get("heads.policy_fc.weight"); this.pFcB = get("heads.policy_fc.bias");
      this.vConvW = get("heads.value_conv.weight"); this.vConvB = get("heads.value_conv.bias");
      this.vFc1W = get("heads.value_fc1.weight"); this.vFc1B = get("heads.value_fc1.bias");
      this.vFc2W = get("heads.value_fc2.weight"); this.vFc2B = get("heads.value_fc2.bias");
      this.act = [new Float64Array(S * 4), new Float64Array(S * 32), new Float64Array(S * 64),
        new Float64Array(S * 128)];
      this.pFlat = new Float64Array(4 * S);
      this.vFlat = new Float64Array(2 * S);
      this.vHidden = new Float64Array(64);
      this.nzStart = new Int32Array(S + 1);  // scratch of _conv3x3
      this.nzOffset = new Int32Array(S * 64);
      this.nzValue = new Float64Array(S * 64);
      this.termOffset = new Int32Array(9 * 64);
      this.termValue = new Float64Array(9 * 64);
      this.evaluations = 0;
    }

    /**
     * planes: 4 * H * W numbers in the layout of Board.current_state() ([plane][row][col]).
     * Returns {logPolicy: Float64Array(H*W), value} (value for the player to move).
     */
    forward(planes) {
      const S = this.size, act = this.act;
      const x0 = act[0];
      for (let c = 0; c < 4; c++) for (let p = 0; p < S; p++) x0[p * 4 + c] = planes[c * S + p];
      for (let i = 0; i < 3; i++) this._conv3x3(act[i], act[i + 1], this.conv[i]);
      const x = act[3];
      // Policy head.
      const pFlat = this.pFlat;
      for (let k = 0; k < 4; k++) {
        const wb = k * 128, bias = this.pConvB[k];
        for (let p = 0; p < S; p++) {
          let s = bias;
          const xb = p * 128;
          for (let c = 0; c < 128; c++) s += this.pConvW[wb + c] * x[xb + c];
          pFlat[k * S + p] = s > 0 ? s : 0;  // flattened as torch does: channel, then point
        }
      }
      const logits = new Float64Array(S);
      let max = -Infinity;
      for (let m = 0; m < S; m++) {
        let s = this.pFcB[m];
        const wb = m * 4 * S;
        for (let j = 0; j < 4 * S; j++) s += this.pFcW[wb + j] * pFlat[j];
        logits[m] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let m = 0; m < S; m++) sum += Math.exp(logits[m] - max);
      const logZ = max + Math.log(sum);
      for (let m = 0; m < S; m++) logits[m] -= logZ;
      // Value head.
      const vFlat = this.vFlat;
      for (let k = 0; k < 2; k++) {
        const wb = k * 128, bias = this.vConvB[k];
        for (let p = 0; p < S; p++) {
          let s = bias;
          const xb = p * 128;
          for (let c = 0; c < 128; c++) s += this.vConvW[wb + c] * x[xb + c];
          vFlat[k * S + p] = s > 0 ? s : 0;
        }
      }
      const hidden = this.vHidden;
      for (let h = 0; h < 64; h++) {
        let s = this.vFc1B[h];
        const wb = h * 2 * S;
        for (let j = 0; j < 2 * S; j++) s += this.vFc1W[wb + j] * vFlat[j];
        hidden[h] = s > 0 ? s : 0;
      }
      let v = this.vFc2B[0];
      for (let h = 0; h < 64; h++) v += this.vFc2W[h] * hidden[h];
      this.evaluations++;
      return { logPolicy: logits, value: Math.tanh(v) };
    }

    _conv3x3(inp, out, layer) {
      // out[p][co] = bias[co] + sum over the 3x3 neighbours q of p and the input channels ci of
      // in[q][ci] * w[ci][k][co], k the neighbour's offset. Only non-zero inputs take part: each
      // point's list of (weight row, value) pairs is gathered over its neighbours, then added to
      // the output row eight (then four, then one) at a time, loading and storing it once a group.
      const { cin, cout, w, b } = layer;
      const H = this.height, W = this.width, S = this.size;
      const { nzStart, nzOffset, nzValue, termOffset: tw, termValue: tv } = this;
      let n = 0;
      for (let q = 0; q < S; q++) {
        nzStart[q] = n;
        const qb = q * cin;
        for (let ci = 0; ci < cin; ci++) {
          const xv = inp[qb + ci];
          if (xv !== 0) {
            nzOffset[n] = ci * 9 * cout;
            nzValue[n++] = xv;
          }
        }
      }
      nzStart[S] = n;
      for (let pr = 0; pr < H; pr++) {
        for (let pc = 0; pc < W; pc++) {
          let m = 0;
          for (let kh = 0; kh < 3; kh++) {
            const r = pr + kh - 1;
            if (r < 0 || r >= H) continue;
            for (let kw = 0; kw < 3; kw++) {
              const c = pc + kw - 1;
              if (c < 0 || c >= W) continue;
              const q = r * W + c, k = (kh * 3 + kw) * cout;
              for (let j = nzStart[q]; j < nzStart[q + 1]; j++) {
                tw[m] = nzOffset[j] + k;
                tv[m++] = nzValue[j];
              }
            }
          }
          const ob = (pr * W + pc) * cout;
          for (let co = 0; co < cout; co++) out[ob + co] = b[co];
          let i = 0;
          for (; i + 8 <= m; i += 8) {
            const x0 = tv[i], x1 = tv[i + 1], x2 = tv[i + 2], x3 = tv[i + 3];
            const x4 = tv[i + 4], x5 = tv[i + 5], x6 = tv[i + 6], x7 = tv[i + 7];
            const w0 = tw[i], w1 = tw[i + 1], w2 = tw[i + 2], w3 = tw[i + 3];
            const w4 = tw[i + 4], w5 = tw[i + 5], w6 = tw[i + 6], w7 = tw[i + 7];
            for (let co = 0; co < cout; co++) {
              out[ob + co] += x0 * w[w0 + co] + x1 * w[w1 + co] + x2 * w[w2 + co] + x3 * w[w3 + co] +
                x4 * w[w4 + co] + x5 * w[w5 + co] + x6 * w[w6 + co] + x7 * w[w7 + co];
            }
          }
          for (; i + 4 <= m; i += 4) {
            const x0 = tv[i], x1 = tv[i + 1], x2 = tv[i + 2], x3 = tv[i + 3];
            const w0 = tw[i], w1 = tw[i + 1], w2 = tw[i + 2], w3 = tw[i + 3];
            for (let co = 0; co < cout; co++) {
              out[ob + co] += x0 * w[w0 + co] + x1 * w[w1 + co] + x2 * w[w2 + co] + x3 * w[w3 + co];
            }
          }
          for (; i < m; i++) {
            const x0 = tv[i], w0 = tw[i];
            for (let co = 0; co < cout; co++) out[ob + co] += x0 * w[w0 + co];
          }
        }
      }
      for (let i = 0; i < out.length; i++) if (out[i] < 0) out[i] = 0;
    }
  }

  /** The 4 input planes of a position given as cells (0 empty, 1/2 a colour), as in the search. */
  function planesOf(cells, size, toMove, lastMove) {
    const planes = new Float64Array(4 * size);
    const other = 3 - toMove;
    for (let p = 0; p < size; p++) {
      if (cells[p] === toMove) planes[p] = 1;
      else if (cells[p] === other) planes[size + p] = 1;
    }
    if (lastMove >= 0) planes[2 * size + lastMove] = 1;
    if (toMove === 1) planes.fill(1, 3 * size, 4 * size);
    return planes;
  }

  /**
   * The net as an evaluator for the search: priors over the `legal` moves (the policy there,
   * renormalised; uniform when it has no mass there), and the value, as nets/evaluator.py.
   */
  class NetEvaluator {
    constructor(net) {
      this.net = net;
    }

    evaluate(cells, toMove, lastMove, legal) {
      const S = this.net.size;
      const { logPolicy, value } = this.net.forward(planesOf(cells, S, toMove, lastMove));
      const priors = new Float64Array(S);
      let total = 0, count = 0;
      for (let m = 0; m < S; m++) {
        if (legal[m]) {
          priors[m] = Math.exp(logPolicy[m]);
          total += priors[m];
          count++;
        }
      }
      for (let m = 0; m < S; m++) {
        if (legal[m]) priors[m] = total > 0 ? priors[m] / total : 1 / count;
      }
      return { priors, value };
    }
  }

  /** Load model.json and weights.bin from `base` (a URL folder ending in "/"). */
  async function loadNet(base) {
    const metaResponse = await fetch(base + "model.json");
    if (!metaResponse.ok) throw new Error(`cannot load ${base}model.json: HTTP ${metaResponse.status}`);
    const meta = await metaResponse.json();
    const weightsResponse = await fetch(base + meta.weights);
    if (!weightsResponse.ok) throw new Error(`cannot load ${base}${meta.weights}: HTTP ${weightsResponse.status}`);
    return { meta, net: new Net(meta, await weightsResponse.arrayBuffer()) };
  }

  Object.assign(G, { Net, NetEvaluator, planesOf, loadNet });
})(typeof globalThis !== "undefined" ? globalThis : self);
