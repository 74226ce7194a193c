#!/bin/bash
# Written by `gputui run` (pattern lightning): PyTorch Lightning: srun starts one task per GPU; Lightning reads Slurm's variables itself.
# Edit it freely and resubmit with: sbatch <this file>
#SBATCH --job-name=train.py
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=8
#SBATCH --mem=64G
#SBATCH --time=01:00:00
#SBATCH --partition=gpu
#SBATCH --account=proj42

set -eo pipefail

# Environment setup (--env-setup)
source '/home/me/env setup.sh'

# Rendezvous: the job's first host, and a port derived from the job id
# (10000 + id % 22768, as gputui.distenv.master_port_for_job does)
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
job_number=${SLURM_JOB_ID%%[!0-9]*}
export MASTER_PORT=$(( 10000 + job_number % 22768 ))
export WORLD_SIZE=$SLURM_NTASKS
export PYTHONUNBUFFERED=1

# Lightning's SLURMEnvironment takes the ranks from SLURM_PROCID/SLURM_LOCALID/SLURM_NODEID and needs
# --ntasks-per-node equal to Trainer(devices=...) and --nodes equal to Trainer(num_nodes=...).
srun python train.py --epochs 3 'a b' 'it'"'"'s' '"q"' '$HOME' 'x;y' '`id`'
