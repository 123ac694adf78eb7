import sys, numpy as np, time
sys.argv=['x']
src=open('/tmp/r20/code/np_minilm.py').read().split("if __name__")[0]
ns={}; exec(src, ns)
W=ns['W']; WT=ns['WT']
ref=np.load('/tmp/r20/code/np_emb.npy')
# quantize every 2-D weight to int8 per row (symmetric), keep 1-D params float32
size=0
for k,v in list(W.items()):
    if v.ndim==2 and v.dtype==np.float32:
        s=np.abs(v).max(1,keepdims=True)/127.0; s[s==0]=1
        q=np.round(v/s).astype(np.int8); size+=q.nbytes+s.astype(np.float32).nbytes
        W[k]=(q.astype(np.float32)*s).astype(np.float32)
    else: size+=v.nbytes
for k in list(WT): WT[k]=np.ascontiguousarray(W[k].T)
s = ['population of Finland by year', 'number of inhabitants per country over time', 'registered vehicles in Ethiopia', 'bus stops of Helsinki transit network']
E=ns['embed'](s)
print('int8 per-row weights: bytes %.1f MB, min cos vs float32 %.5f' % (size/1e6, (E*ref).sum(1).min()))
np.set_printoptions(precision=3, suppress=True); print(E@E.T)
