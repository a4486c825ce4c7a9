"""What each sample contributes to identification: rows linear in the inertial parameters.

ZMP/CoP rows and the model ZMP (:mod:`.zmp`, :mod:`.regressors`), joint-torque and
floating-base wrench rows with friction columns (:mod:`.linear`), foot F/T rows of a swinging
foot (:mod:`.foot_ft`) and the rotor-inertia and friction columns of a geared joint
(:mod:`.drive`).
"""
