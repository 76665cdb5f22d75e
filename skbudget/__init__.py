"""skbudget: online kernel classifiers for scikit-learn.

Kernel perceptrons, passive-aggressive learners, an SGD-trained kernel SVM,
kernel online gradient descent and online kernel approximations, most of
them in a memory fixed in advance (a budget), each exactly as published, on
one compiled engine.
"""

from skbudget._amm import AdaptiveMultiHyperplaneClassifier
from skbudget._bogd import BoundedOGDClassifier
from skbudget._bpa import BudgetedPassiveAggressive
from skbudget._bsgd import BudgetedSGDClassifier
from skbudget._budget import (
    BudgetPerceptron,
    Forgetron,
    KernelPassiveAggressive,
    RandomBudgetPerceptron,
    Stoptron,
)
from skbudget._fourier import FourierOGDClassifier
from skbudget._llsvm import LandmarkNystroem, LowRankLinearizedSVC
from skbudget._mira import BudgetMIRA, KernelMIRA
from skbudget._ogd import KernelOGDClassifier, NystromOGDClassifier
from skbudget._perceptron import KernelPerceptron
from skbudget._projectron import Projectron, ProjectronPlusPlus
from skbudget._tighter import TighterPerceptron, TightestPerceptron
from skbudget.model_selection import SequentialSearchCV

__version__ = "0.1.0"

__all__ = [
    "AdaptiveMultiHyperplaneClassifier",
    "BoundedOGDClassifier",
    "BudgetMIRA",
    "BudgetedPassiveAggressive",
    "BudgetedSGDClassifier",
    "BudgetPerceptron",
    "Forgetron",
    "FourierOGDClassifier",
    "KernelMIRA",
    "KernelOGDClassifier",
    "KernelPassiveAggressive",
    "KernelPerceptron",
    "LandmarkNystroem",
    "LowRankLinearizedSVC",
    "NystromOGDClassifier",
    "RandomBudgetPerceptron",
    "Stoptron",
    "Projectron",
    "ProjectronPlusPlus",
    "SequentialSearchCV",
    "TighterPerceptron",
    "TightestPerceptron",
]
