// The policy-value nets of nets/model.py on typed arrays: no library, no download.
//
//   Two trunks (model.json's "arch"), C channels out of them:
//   "conv3": conv3x3 4->32->64->128, ReLU (C = 128).
//   "resnet" (model.json's "channels" C and "blocks"): a stem conv3x3 4->C, ReLU, then each block
//     x -> ReLU(x + conv3x3(ReLU(conv3x3(x)))); the export folded each BatchNorm into the
//     convolution before it, so every layer is a 3x3 convolution with a bias.
//   Two kinds of heads (model.json's "head"):
//   "fc" (one board, the one it was trained on): policy conv1x1 C->4, ReLU, FC 4*H*W -> H*W,
//     log-softmax; value conv1x1 C->2, ReLU, FC 2*H*W -> 64, ReLU, FC 64 -> 1, tanh.
//   "pooled" (any board in model.json's "sizes"): policy conv1x1 C->32, ReLU, conv1x1 32->1,
//     log-softmax over the points; value conv1x1 C->32, ReLU, per channel the average and the
//     maximum over the board (the 32 averages, then the 32 maxima), FC 64->64, ReLU, FC 64->1, tanh.
//
// The weights come as model.json (names, shapes and offsets, in torch's own layouts) and
// weights.bin (little-endian float32), written by gomoku/web/export.py under the page's names
// (export.py's page_tensors: the trunk's layers as in trunkOf, "fc" heads under torch's names,
// "pooled" ones under the page's). At load the 3x3 kernels are
// rearranged to [in channel][kh][kw][out channel], so that the trunk runs as a scatter over the
// input's non-zero activations (ReLU leaves about half of them at zero, and the input planes are
// mostly zero) with a contiguous inner loop over output channels. Activations are stored
// point-major ([point][channel]) in float64: sums are at least as exact as torch's float32.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});
  const POOLED = 32;  // channels of the pooled heads' 1x1 convolutions
  const HIDDEN = 64;  // the value head's hidden layer
  const MAX_BLOCKS = 40;  // nets/model.py's bounds of a residual tower
  const MAX_CHANNELS = 512;

  /**
   * The trunk's 3x3 convolutions (model.json's arch, and a tower's channels and blocks), in the
   * order they run: the name of its tensors, its channels in and out, and `skip`: the activation
   * added before its ReLU (a residual block's input), or -1. Activation 0 is the input planes;
   * layer i reads activation i and writes activation i + 1.
   */
  function trunkOf(meta) {
    if (meta.arch === "conv3") {
      return [{ name: "conv1", cin: 4, cout: 32, skip: -1 }, { name: "conv2", cin: 32, cout: 64, skip: -1 },
        { name: "conv3", cin: 64, cout: 128, skip: -1 }];
    }
    if (meta.arch !== "resnet") throw new Error(`unsupported net architecture ${meta.arch}`);
    const C = meta.channels, blocks = meta.blocks;
    if (!(Number.isInteger(C) && C >= 1 && C <= MAX_CHANNELS && Number.isInteger(blocks) && blocks >= 0
      && blocks <= MAX_BLOCKS)) throw new Error(`bad residual tower: ${C} channels, ${blocks} blocks`);
    const layers = [{ name: "stem", cin: 4, cout: C, skip: -1 }];
    for (let block = 0; block < blocks; block++) {
      const input = layers.length;  // the activation the block reads, added back after its second layer
      layers.push({ name: `blocks.${block}.conv1`, cin: C, cout: C, skip: -1 },
        { name: `blocks.${block}.conv2`, cin: C, cout: C, skip: input });
    }
    return layers;
  }

  /** Names and shapes of the heads' tensors: `head` heads on C channels, boards of `S` points. */
  function headShapes(head, C, S) {
    if (head === "pooled") {
      return {
        "policy1.weight": [POOLED, C, 1, 1], "policy1.bias": [POOLED],
        "policy2.weight": [1, POOLED, 1, 1], "policy2.bias": [1],
        "value_conv.weight": [POOLED, C, 1, 1], "value_conv.bias": [POOLED],
        "value_fc1.weight": [HIDDEN, 2 * POOLED], "value_fc1.bias": [HIDDEN],
        "value_fc2.weight": [1, HIDDEN], "value_fc2.bias": [1],
      };
    }
    return {
      "heads.policy_conv.weight": [4, C, 1, 1], "heads.policy_conv.bias": [4],
      "heads.policy_fc.weight": [S, 4 * S], "heads.policy_fc.bias": [S],
      "heads.value_conv.weight": [2, C, 1, 1], "heads.value_conv.bias": [2],
      "heads.value_fc1.weight": [HIDDEN, 2 * S], "heads.value_fc1.bias": [HIDDEN],
      "heads.value_fc2.weight": [1, HIDDEN], "heads.value_fc2.bias": [1],
    };
  }

  /** out[p] = relu(b[k] + sum_c w[k][c] x[p][c]) for `rows` output channels k, point-major, C inputs. */
  function conv1x1Relu(x, C, w, b, rows, S, out) {
    for (let p = 0; p < S; p++) {
      const xb = p * C;
      for (let k = 0; k < rows; k++) {
        let s = b[k];
        const wb = k * C;
        for (let c = 0; c < C; c++) s += w[wb + c] * x[xb + c];
        out[p * rows + k] = s > 0 ? s : 0;
      }
    }
  }

  function logSoftmax(logits) {
    let max = -Infinity;
    for (let m = 0; m < logits.length; m++) if (logits[m] > max) max = logits[m];
    let sum = 0;
    for (let m = 0; m < logits.length; m++) sum += Math.exp(logits[m] - max);
    const logZ = max + Math.log(sum);
    for (let m = 0; m < logits.length; m++) logits[m] -= logZ;
    return logits;
  }

  /** The value head's end: FC 64 -> 64, ReLU, FC 64 -> 1, tanh, on `features` (its FC's input). */
  function valueOf(features, w1, b1, w2, b2, hidden) {
    const n = features.length;
    for (let h = 0; h < HIDDEN; h++) {
      let s = b1[h];
      const wb = h * n;
      for (let j = 0; j < n; j++) s += w1[wb + j] * features[j];
      hidden[h] = s > 0 ? s : 0;
    }
    let v = b2[0];
    for (let h = 0; h < HIDDEN; h++) v += w2[h] * hidden[h];
    return Math.tanh(v);
  }

  class Net {
    /** meta: the parsed model.json; buffer: the ArrayBuffer of weights.bin. */
    constructor(meta, buffer) {
      const layers = trunkOf(meta);
      const head = (this.head = meta.head || "fc");
      if (head !== "fc" && head !== "pooled") throw new Error(`unsupported net heads ${head}`);
      this.width = meta.width;  // the board it was trained on
      this.height = meta.height;
      this.sizes = meta.sizes || [meta.width];  // square boards it plays (an "fc" net: its own)
      const floats = new Float32Array(buffer);
      this.channels = layers[layers.length - 1].cout;  // C, the heads' input
      const heads = headShapes(head, this.channels, meta.width * meta.height);
      const shapes = Object.assign({}, heads);
      for (const { name, cin, cout } of layers) {
        shapes[`${name}.weight`] = [cout, cin, 3, 3];
        shapes[`${name}.bias`] = [cout];
      }
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
      this.conv = layers.map((layer) => Object.assign({}, layer, {
        w: kernel(`${layer.name}.weight`, layer.cout, layer.cin), b: get(`${layer.name}.bias`) }));
      this.far = layers.length + 1;  // farther from every stone than the trunk's 3x3 layers see
      this.w = Object.fromEntries(Object.keys(heads).map((name) => [name.replace("heads.", ""), get(name)]));
      this.vHidden = new Float64Array(HIDDEN);
      this.skipFar = true;  // copy the empty board's rows far from the stones (_near); false: compute all
      this.scratch = null;  // the buffers of one board size (_buffers)
      this.evaluations = 0;
    }

    /** Whether the net plays a width x height board. */
    plays(width, height) {
      return width === height && this.sizes.includes(width);
    }

    _buffers(W, H) {
      const S = W * H;
      if (!this.scratch || this.scratch.W !== W || this.scratch.H !== H) {
        const maxIn = Math.max(...this.conv.map((layer) => layer.cin));
        this.scratch = {
          W, H, S,
          act: this._activations(S),
          head: new Float64Array(S * POOLED),
          near: new Uint8Array(S),  // _near
          empty: [null, null],  // _emptyBoard, White to move and Black to move
          nzStart: new Int32Array(S + 1),  // scratch of _conv3x3
          nzOffset: new Int32Array(S * maxIn),
          nzValue: new Float64Array(S * maxIn),
          termOffset: new Int32Array(9 * maxIn),
          termValue: new Float64Array(9 * maxIn),
        };
      }
      return this.scratch;
    }

    /** The trunk's activations on a board of S points: the input planes, then each layer's output. */
    _activations(S) {
      return [new Float64Array(S * 4), ...this.conv.map((layer) => new Float64Array(S * layer.cout))];
    }

    /** Runs the trunk's layers on act[0] into act[1..] (near, empty: see _near, or null). */
    _trunk(act, buffers, near, empty) {
      this.conv.forEach((layer, i) => this._conv3x3(act[i], act[i + 1], layer, buffers, near, empty && empty[i],
        i + 1, layer.skip >= 0 ? act[layer.skip] : null));
      return act[act.length - 1];
    }

    /**
     * planes: 4 * H * W numbers in the layout of Board.current_state() ([plane][row][col]) of a
     * width x height board (the net's own by default). Returns {logPolicy: Float64Array(H*W),
     * value} (value for the player to move).
     */
    forward(planes, width = this.width, height = this.height) {
      if (!this.plays(width, height)) throw new Error(`the net does not play a ${width}x${height} board`);
      const buffers = this._buffers(width, height);
      const { S, act } = buffers;
      const x0 = act[0];
      for (let c = 0; c < 4; c++) for (let p = 0; p < S; p++) x0[p * 4 + c] = planes[c * S + p];
      const near = this.skipFar ? this._near(planes, buffers) : null;
      const x = this._trunk(act, buffers, near, near && this._emptyBoard(buffers, planes[3 * S]));
      const out = this.head === "pooled" ? this._pooledHeads(x, buffers) : this._fcHeads(x, buffers);
      this.evaluations++;
      return out;
    }

    _fcHeads(x, { S, head }) {
      const w = this.w, flat = head;  // [point][channel]; torch flattens channel, then point
      conv1x1Relu(x, this.channels, w["policy_conv.weight"], w["policy_conv.bias"], 4, S, flat);
      const logits = new Float64Array(S);
      const pw = w["policy_fc.weight"];
      for (let m = 0; m < S; m++) {
        let s = w["policy_fc.bias"][m];
        const wb = m * 4 * S;
        for (let k = 0; k < 4; k++) for (let p = 0; p < S; p++) s += pw[wb + k * S + p] * flat[p * 4 + k];
        logits[m] = s;
      }
      conv1x1Relu(x, this.channels, w["value_conv.weight"], w["value_conv.bias"], 2, S, flat);
      const features = new Float64Array(2 * S);
      for (let k = 0; k < 2; k++) for (let p = 0; p < S; p++) features[k * S + p] = flat[p * 2 + k];
      const value = valueOf(features, w["value_fc1.weight"], w["value_fc1.bias"], w["value_fc2.weight"],
        w["value_fc2.bias"], this.vHidden);
      return { logPolicy: logSoftmax(logits), value };
    }

    _pooledHeads(x, { S, head }) {
      const w = this.w;
      conv1x1Relu(x, this.channels, w["policy1.weight"], w["policy1.bias"], POOLED, S, head);
      const logits = new Float64Array(S);
      const w2 = w["policy2.weight"], b2 = w["policy2.bias"][0];
      for (let p = 0; p < S; p++) {
        let s = b2;
        for (let k = 0; k < POOLED; k++) s += w2[k] * head[p * POOLED + k];
        logits[p] = s;
      }
      conv1x1Relu(x, this.channels, w["value_conv.weight"], w["value_conv.bias"], POOLED, S, head);
      const features = new Float64Array(2 * POOLED);  // the averages, then the maxima
      for (let k = 0; k < POOLED; k++) {
        let sum = 0, max = -Infinity;
        for (let p = 0; p < S; p++) {
          const v = head[p * POOLED + k];
          sum += v;
          if (v > max) max = v;
        }
        features[k] = sum / S;
        features[POOLED + k] = max;
      }
      const value = valueOf(features, w["value_fc1.weight"], w["value_fc1.bias"], w["value_fc2.weight"],
        w["value_fc2.bias"], this.vHidden);
      return { logPolicy: logSoftmax(logits), value };
    }

    /**
     * Per point, the distance (in king moves, at most this.far) to the nearest stone or last move
     * of the planes. The output of the trunk's layer l (1, 2, ...) at a point farther than l from
     * all of them sees only empty points there, so it is the empty board's (of the same player to
     * move), to the bit: the layers compute only the other points and copy these (_emptyBoard).
     * That holds for a residual tower too: the activation a block adds back at a point is an
     * earlier layer's there, which sees less far. The copied points are most of a 15x15 board in
     * the first layers; the deep layers of a tower see so far that they copy few.
     */
    _near(planes, { W, H, S, near }) {
      const far = this.far, reach = far - 1;
      near.fill(far);
      for (let p = 0; p < S; p++) {
        if (!(planes[p] || planes[S + p] || planes[2 * S + p])) continue;
        const r0 = Math.floor(p / W), c0 = p % W;
        for (let r = Math.max(0, r0 - reach); r <= Math.min(H - 1, r0 + reach); r++) {
          for (let c = Math.max(0, c0 - reach); c <= Math.min(W - 1, c0 + reach); c++) {
            const d = Math.max(Math.abs(r - r0), Math.abs(c - c0));
            if (d < near[r * W + c]) near[r * W + c] = d;
          }
        }
      }
      return near;
    }

    /** The trunk layers' outputs on the empty board of this size, `black` 1 (Black to move) or not. */
    _emptyBoard(buffers, black) {
      const key = black ? 1 : 0;
      if (!buffers.empty[key]) {
        const acts = this._activations(buffers.S);
        if (black) for (let p = 0; p < buffers.S; p++) acts[0][p * 4 + 3] = 1;
        this._trunk(acts, buffers, null, null);
        buffers.empty[key] = acts.slice(1);
      }
      return buffers.empty[key];
    }

    _conv3x3(inp, out, layer, buffers, near, empty, depth, skip) {
      // out[p][co] = relu(bias[co] + sum over the 3x3 neighbours q of p and the input channels ci
      // of in[q][ci] * w[ci][k][co], k the neighbour's offset, + skip[p][co] when a residual block
      // adds its input back). Only non-zero inputs take part: each point's list of (weight row,
      // value) pairs is gathered over its neighbours, then added to the output row eight (then
      // four, then one) at a time, loading and storing it once a group. Points farther than
      // `depth` from every stone (`near`) take the empty board's row (`empty`).
      const { cin, cout, w, b } = layer;
      const { H, W, S, nzStart, nzOffset, nzValue, termOffset: tw, termValue: tv } = buffers;
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
          const ob = (pr * W + pc) * cout;
          if (near && near[pr * W + pc] > depth) {
            for (let co = 0; co < cout; co++) out[ob + co] = empty[ob + co];
            continue;
          }
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
          if (skip) for (let co = 0; co < cout; co++) out[ob + co] += skip[ob + co];
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
    /** The net on a width x height board (the net's own by default). */
    constructor(net, width = net.width, height = net.height) {
      if (!net.plays(width, height)) throw new Error(`the net does not play a ${width}x${height} board`);
      this.net = net;
      this.width = width;
      this.height = height;
    }

    evaluate(cells, toMove, lastMove, legal) {
      const S = this.width * this.height;
      const { logPolicy, value } = this.net.forward(planesOf(cells, S, toMove, lastMove), this.width, this.height);
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
