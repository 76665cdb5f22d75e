"""
=================================================
Deploying a model: ONNX export and skops files
=================================================

A budgeted model trained on a stream leaves Python in two ways (see
:ref:`deploying`):

* as an ONNX graph, run by onnxruntime without Python or skbudget;
* as a skops file, which is safe to load and lets the model continue its
  stream where it stopped.

Here a :class:`~skbudget.Forgetron` in a pipeline with a scaler learns a
three-class problem; its ONNX export is run by onnxruntime and compared
with ``predict`` and ``decision_function``; then the model is saved
with skops halfway through its stream, loaded, and continued.
"""

import matplotlib.pyplot as plt
import numpy as np
import onnxruntime as ort
import skops.io as sio
from skl2onnx import to_onnx
from sklearn.datasets import make_blobs
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skbudget.onnx  # noqa: F401  (registers the converters with skl2onnx)
from skbudget import Forgetron
from skbudget.discovery import all_estimators

X, y = make_blobs(3000, centers=3, n_features=2, cluster_std=2.5, random_state=0)
X_train, y_train, X_test = X[:2000], y[:2000], X[2000:]

# %%
# Export to ONNX and run with onnxruntime
# ---------------------------------------
# ``to_onnx`` takes a sample of the input (float32 here); the graph has
# two outputs, the label and the decision scores.

model = make_pipeline(StandardScaler(), Forgetron(budget=40, gamma=1.0, random_state=0))
model.fit(X_train, y_train)

onx = to_onnx(model, X_train[:1].astype(np.float32))
session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
print("outputs:", [o.name for o in session.get_outputs()])
label, scores = session.run(None, {session.get_inputs()[0].name: X_test.astype(np.float32)})

expected = model.decision_function(X_test)
print(f"labels equal to predict: {np.mean(label == model.predict(X_test)):.2%}")
print(f"largest score difference: {np.max(np.abs(scores - expected)):.2e}")
print(f"ONNX model: {len(onx.SerializeToString())} bytes")

fig, ax = plt.subplots(figsize=(5, 4))
ax.scatter(expected.ravel(), scores.ravel(), s=4)
ax.set_xlabel("decision_function (skbudget, float64)")
ax.set_ylabel("scores (onnxruntime, float32 input)")
ax.set_title("ONNX export: the same scores")
plt.tight_layout()

# %%
# Save with skops, load, continue the stream
# ------------------------------------------
# The types a skops file of a skbudget model asks you to trust are the
# estimator's class (and, for a model trained on CSR input, SciPy's CSR
# matrix); the training state travels as plain arrays.  Trust a fixed list
# written in the code, never the list a file gives
# (``get_untrusted_types`` only inspects it).

TRUSTED = [f"{cls.__module__}.{cls.__qualname__}" for _, cls in all_estimators()]
TRUSTED.append("scipy.sparse._csr.csr_matrix")    # models trained on CSR input

clf = Forgetron(budget=40, gamma=1.0, random_state=0)
clf.partial_fit(X_train[:1000], y_train[:1000], classes=[0, 1, 2])
data = sio.dumps(clf)
print("types the file names:", sio.get_untrusted_types(data=data))
loaded = sio.loads(data, trusted=TRUSTED)

for est in (clf, loaded):               # both continue the stream
    est.partial_fit(X_train[1000:], y_train[1000:])
print("continued model identical:",
      np.array_equal(clf.dual_coef_, loaded.dual_coef_)
      and np.array_equal(clf.support_vectors_, loaded.support_vectors_))
