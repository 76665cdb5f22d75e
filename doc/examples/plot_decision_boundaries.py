"""
=================================
Decision boundaries at two budgets
=================================

Placeholder.
"""
import matplotlib.pyplot as plt
plt.plot([0, 1])
