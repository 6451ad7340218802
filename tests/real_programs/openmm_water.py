#!/usr/bin/env python3
"""OpenMM on its OpenCL platform: a PME box of TIP3P water (1,503 atoms), a few hundred MD steps.

Usage: openmm_water.py [STEPS=500] [BOX_NM=2.5]

The box comes from Modeller.addSolvent. Its clashes across the periodic boundary are relaxed by
100 short steps (0.2 fs, friction 10/ps) instead of LocalEnergyMinimizer: that minimiser gives a
different structure every run (on the CPU and on the OpenCL platform alike), while the OpenCL
platform's forces and the seeded Langevin integrator give the same trajectory every run. Then STEPS
steps of 2 fs (friction 1/ps), the potential energy read every 100 steps (a host sync, as a real
run's reporters do). stdout: the energies rounded to 1 kJ/mol, the same every run (the last digits
of an energy sum on the device vary by ~0.01 kJ/mol); stderr: the device and the times.
"""
import sys
import time

import openmm as mm
from openmm import app, unit

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
box = float(sys.argv[2]) if len(sys.argv) > 2 else 2.5

t0 = time.monotonic()
forcefield = app.ForceField("amber14/tip3p.xml")
modeller = app.Modeller(app.Topology(), [])
modeller.addSolvent(forcefield, model="tip3p", boxSize=mm.Vec3(box, box, box) * unit.nanometer)
system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME,
                                 nonbondedCutoff=0.9 * unit.nanometer, constraints=app.HBonds,
                                 rigidWater=True)
integrator = mm.LangevinMiddleIntegrator(300 * unit.kelvin, 10 / unit.picosecond,
                                         0.0002 * unit.picoseconds)
integrator.setRandomNumberSeed(1234)
platform = mm.Platform.getPlatformByName("OpenCL")
context = mm.Context(system, integrator, platform, {"Precision": "single"})
context.setPositions(modeller.positions)
context.setVelocitiesToTemperature(300 * unit.kelvin, 1234)


def energy():
    e = context.getState(getEnergy=True).getPotentialEnergy()
    return round(e.value_in_unit(unit.kilojoule_per_mole))


print(f"openmm {mm.__version__} water box {box} nm: {system.getNumParticles()} atoms, "
      f"PME, {steps} steps of 2 fs")
print(f"initial potential energy: {energy()} kJ/mol")
t1 = time.monotonic()
integrator.step(100)
print(f"after relaxation (100 x 0.2 fs): {energy()} kJ/mol")
integrator.setStepSize(0.002 * unit.picoseconds)
integrator.setFriction(1 / unit.picosecond)
done = 0
while done < steps:
    n = min(100, steps - done)
    integrator.step(n)
    done += n
    e = energy()
    if done < steps:
        print(f"step {done}: {e} kJ/mol")
print(f"final potential energy: {e} kJ/mol")
t2 = time.monotonic()
print(f"platform {platform.getName()}, device {platform.getPropertyValue(context, 'DeviceName')}",
      file=sys.stderr)
print(f"time: set-up and OpenCL context {t1 - t0:.2f} s, MD {t2 - t1:.2f} s", file=sys.stderr)
