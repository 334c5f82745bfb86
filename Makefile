# wattlas -- DVFS design-space exploration of AI workloads on GPUs.
# make          build bin/wattlas
# make run      install missing packages, build, run the default prediction
# make check    install missing packages, build, run every test
# make asan     tests under AddressSanitizer + UBSan
# make bench    speed benchmark
# make calibrate  refit the presets with measurements (A100 PCIe 40/80GB and SXM, H100 SXM, H200, A100 SXM 500 W, A40) from ../shared/data
# make python   the Python package in place (PYTHONPATH=python python3 -c 'import wattlas')

CC ?= cc
SHARED ?= ../shared
PKGS = gsl inih cairo libpng xgboost zlib
WARN = -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes
OMPFLAGS ?= -fopenmp
BASECFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(OMPFLAGS)
OPT ?= -O2 -g
# pkg-config is only run once the packages are installed (recursive make)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))
CFLAGS_ALL = $(BASECFLAGS) $(OPT) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lm $(OMPFLAGS) $(EXTRA_LDFLAGS)
BUILD ?= build
BIN ?= bin
MPICC ?= mpicc
# Debian's interpreter, for which python3-dev and python3-numpy are installed
# (a python3 of pyenv or a venv earlier in PATH may lack them)
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PIC_BUILD = build-pic

CORE_SRC = core/util.c core/gpu.c core/workload.c core/latency.c core/kpower.c core/governor.c core/eval.c core/evaluator.c core/energy_check.c \
           core/json.c core/trace.c core/builder.c core/build_ops.c core/build_layer.c core/tech.c core/grammar.c \
           core/memory.c core/model.c core/zin.c core/profile.c core/profile_map.c core/build_hf5.c core/build_train.c core/build_gen.c
PRESET_SRC = presets/builtin.c presets/parse.c presets/gpu.c presets/model.c presets/hosts.c presets/derive.c presets/ini.c
RESULTS_SRC = results/results.c results/tables.c results/out.c
CALIB_SRC = calib/measure.c calib/params.c calib/fit.c calib/uncertainty.c calib/validate.c calib/crossval.c calib/validation.c calib/preset_out.c calib/vf.c calib/run.c calib/tc_ratio.c
SWEEP_SRC = sweep/spec.c sweep/spec_finish.c sweep/spec_gpus.c sweep/combo.c sweep/scratch.c sweep/sweep.c sweep/run.c sweep/merge.c sweep/compare.c \
            sweep/energy_check.c
PARETO_SRC = pareto/pareto.c pareto/sets.c pareto/schedule.c pareto/compare.c
PLOT_SRC = plot/plot.c plot/axes.c plot/kinds.c plot/series.c plot/bars.c plot/report.c plot/report_files.c plot/report_index.c plot/report_serve.c \
           $(sort $(wildcard plot/kinds/*.c))
LEARN_SRC = learn/learn.c learn/data.c learn/model_file.c learn/run.c
CLUSTER_SRC = cluster/system.c cluster/comm.c cluster/layers.c cluster/counts.c cluster/stage.c cluster/pipeline.c cluster/cluster.c cluster/config.c cluster/partition.c cluster/refine.c cluster/timeline_json.c cluster/plans.c cluster/graph.c cluster/bound.c cluster/piececache.c cluster/search.c \
              cluster/view.c
SERVE_SRC = serve/requests.c serve/steps.c serve/engine.c serve/run.c serve/job.c serve/validate.c
CLI_SRC = cli/main.c cli/cmd_serve.c cli/cmd_predict.c cli/cmd_compare.c cli/cmd_energy_check.c cli/cmd_validate.c cli/cmd_presets.c cli/cmd_calibrate.c cli/cmd_sweep.c cli/cmd_pareto.c cli/cmd_plot.c cli/cmd_report.c cli/cmd_cluster.c cli/cmd_learn.c cli/args.c
LIB_SRC = $(CORE_SRC) $(PRESET_SRC) $(RESULTS_SRC) $(CALIB_SRC) $(LEARN_SRC) $(SWEEP_SRC) $(PARETO_SRC) $(PLOT_SRC) $(CLUSTER_SRC) $(SERVE_SRC)
PRESET_FILES = $(sort $(wildcard presets/gpus/*.ini)) $(sort $(wildcard presets/models/*.ini)) $(sort $(wildcard presets/hosts/*.ini)) $(sort $(wildcard presets/systems/*.ini)) $(sort $(wildcard presets/workloads/*.ini))
TESTS = test_core test_workloads test_profile test_train test_presets test_results test_calib test_cli test_cli_multi test_cli_edges test_cli_hostile test_pareto test_sweep test_plot test_cluster test_cluster_search test_learn test_serve \
        test_fuzz_replay test_python test_measure test_accuracy test_readme test_structure test_invariants
FUZZ_TARGETS = csv measurements sweep_table gpu_preset model_preset trace spec idle grammar plot \
    host_preset system_preset learned timeline merge profile serve serve_rows
FUZZ_SECONDS ?= 60

LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/presets_embedded.o $(BUILD)/commit.o
# the commit a build is made from, for the provenance of reports ("+modified"
# with uncommitted changes; "unknown" outside a git checkout)
COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null && echo $$c || echo $$c+modified; } || echo unknown)
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/%.o)

.PHONY: FORCE all deps run check test asan mutate bench bench-guard bench-baseline calibrate readme-check clean presets-vf docs-figures fuzz fuzz-build mpi install invariants \
        python pic-lib

all: $(BIN)/wattlas

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c $(wildcard */*.h plot/kinds/*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD):
	@mkdir -p $(BUILD)

$(BUILD)/embed: tools/embed.c | $(BUILD)
	$(CC) -std=c11 -O1 -Wall -Wextra $< -o $@

$(BUILD)/presets_embedded.c: $(BUILD)/embed $(PRESET_FILES)
	$(BUILD)/embed $@ $(foreach f,$(PRESET_FILES),$(notdir $(patsubst %/,%,$(dir $(f))))=$(f))

# rewritten only when the commit changes, so a build stays incremental
$(BUILD)/commit.c: FORCE | $(BUILD)
	@printf '%s\n' '/* generated by make */' 'const char *wl_core_build_commit(void);' \
	    'const char *wl_core_build_commit(void) { return "$(COMMIT)"; }' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/commit.o: $(BUILD)/commit.c
	$(CC) $(CFLAGS_ALL) -c $< -o $@

FORCE:

$(BUILD)/presets_embedded.o: $(BUILD)/presets_embedded.c
	$(CC) $(CFLAGS_ALL) -Wno-overlength-strings -c $< -o $@

$(BUILD)/libwattlas.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BIN)/wattlas: $(CLI_OBJ) $(BUILD)/libwattlas.a
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(BUILD)/tests/test_fuzz_replay: tests/test_fuzz_replay.c $(wildcard tests/fuzz/*.c tests/fuzz/*.h) tests/test_util.h $(BUILD)/libwattlas.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(shell pkg-config --cflags cmocka) $< $(BUILD)/libwattlas.a -o $@ \
	    $(LDLIBS_ALL) $(shell pkg-config --libs cmocka)

$(BUILD)/tests/test_cli $(BUILD)/tests/test_cli_multi $(BUILD)/tests/test_cli_edges $(BUILD)/tests/test_cli_hostile: tests/test_cli.h
$(BUILD)/tests/test_core $(BUILD)/tests/test_workloads: tests/test_core.h

$(BUILD)/tests/%: tests/%.c tests/test_util.h $(BUILD)/libwattlas.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(shell pkg-config --cflags cmocka) -DWATTLAS_BIN_PATH='"$(BIN)/wattlas"' \
	    -DWATTLAS_MPI_BIN_PATH='"$(BIN)/wattlas-mpi"' -DWATTLAS_BUILD_DIR='"$(BUILD)"' \
	    $< $(BUILD)/libwattlas.a -o $@ \
	    $(LDLIBS_ALL) $(shell pkg-config --libs cmocka)

# The Python package (python/): the extension module over a position-
# independent build of the library, in place so that PYTHONPATH=python finds it.
pic-lib:
	@$(MAKE) --no-print-directory BUILD=$(PIC_BUILD) OPT="$(OPT) -fPIC" $(PIC_BUILD)/libwattlas.a

python: pic-lib
	cd python && WATTLAS_LIB=$(CURDIR)/$(PIC_BUILD)/libwattlas.a $(PYTHON) setup.py -q build_ext --inplace

# its tests, run like the others (tests/run.sh reads the summary line)
$(BUILD)/tests/test_python: tests/test_python.py tests/pyunit.py $(wildcard python/*.c) python/wattlas_py.h python/setup.py $(wildcard python/wattlas/*.py) \
        $(BIN)/wattlas $(BUILD)/libwattlas.a | $(BUILD)
	@$(MAKE) --no-print-directory python
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && PYTHONPATH=python WATTLAS_BIN="%s" exec %s tests/test_python.py "$$@"\n' \
	    "$(CURDIR)" "$(CURDIR)/$(BIN)/wattlas" "$(PYTHON)" > $@
	chmod +x $@

# the property layer: invariants where features meet, over cases drawn with a
# seed that changes every run (printed; replay: make invariants SEED=S N=K)
$(BUILD)/tests/test_invariants: tests/test_invariants.py tests/pyunit.py $(BUILD)/tests/test_python | $(BUILD)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && PYTHONPATH=python WATTLAS_BIN="%s" exec %s tests/test_invariants.py "$$@"\n' \
	    "$(CURDIR)" "$(CURDIR)/$(BIN)/wattlas" "$(PYTHON)" > $@
	chmod +x $@

N ?= 200
invariants: all $(BUILD)/tests/test_invariants
	@WATTLAS_INVARIANT_CASES=$(N) $(if $(SEED),WATTLAS_SEED=$(SEED)) $(BUILD)/tests/test_invariants

# the README's numbers against the commands that print them (the slow ones:
# make readme-check)
# every accuracy figure the README states, held to bounds of its own
$(BUILD)/tests/test_accuracy: tests/test_accuracy.py tests/test_readme.py tests/pyunit.py $(BIN)/wattlas | $(BUILD)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && PYTHONPATH=python WATTLAS_BIN="%s" exec %s tests/test_accuracy.py "$$@"\n' \
	    "$(CURDIR)" "$(CURDIR)/$(BIN)/wattlas" "$(PYTHON)" > $@
	chmod +x $@

$(BUILD)/tests/test_readme: tests/test_readme.py tests/pyunit.py $(BUILD)/tests/test_python | $(BUILD)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && PYTHONPATH=python WATTLAS_BIN="%s" exec %s tests/test_readme.py "$$@"\n' \
	    "$(CURDIR)" "$(CURDIR)/$(BIN)/wattlas" "$(PYTHON)" > $@
	chmod +x $@

readme-check: deps $(BIN)/wattlas $(BUILD)/tests/test_readme
	@$(BUILD)/tests/test_readme --all

# the code's structure against docs/ARCHITECTURE.md: file sizes, no circle
# between files, includes down the floors
$(BUILD)/tests/test_structure: tests/test_structure.py tests/pyunit.py | $(BUILD)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && exec %s tests/test_structure.py "$$@"\n' "$(CURDIR)" "$(PYTHON)" > $@
	chmod +x $@

# the measurement harness's tests (no GPU, no PyTorch, no extension needed)
$(BUILD)/tests/test_measure: tests/test_measure.py tests/pyunit.py $(wildcard python/wattlas/measure*.py) $(BIN)/wattlas \
        $(BUILD)/tests/test_python | $(BUILD)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\ncd "%s" && exec %s tests/test_measure.py "$$@"\n' "$(CURDIR)" "$(PYTHON)" > $@
	chmod +x $@

# The default job: the default study (GPT-3 decoder layers on the A100
# presets) as figures, CSVs and index.html in results/default-study/, then
# its energy-optimal clocks.
run: deps
	@$(MAKE) --no-print-directory all
	$(BIN)/wattlas report --spec studies/default.ini -o results/default-study
	@sed -n '/^## Energy-optimal/,/^## Savings/p' results/default-study/index.md | head -n -1
	@echo "open results/default-study/index.html for the figures"

# the MPI build is tested when Open MPI is installed (scripts/deps.sh installs it)
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 && echo yes)
test: $(BIN)/wattlas $(if $(HAVE_MPI),$(BIN)/wattlas-mpi) $(TESTS:%=$(BUILD)/tests/%)
	@sh tests/run.sh $(BUILD)/tests $(TESTS)

# make check ends with the speed guard (bench/bench_guard.c): each
# benchmark's time over a reference loop's, against bench/baselines.ini
check: deps
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory bench-guard

bench-guard: all $(BUILD)/bench_guard
	@$(BUILD)/bench_guard bench/baselines.ini

# after a change that makes a benchmark faster for good (or a slower one
# that is worth it, said in the commit): the guard's ratios measured anew
bench-baseline: all $(BUILD)/bench_guard
	$(BUILD)/bench_guard --write bench/baselines.ini

# (not the Python package: an instrumented extension cannot load into the
# uninstrumented interpreter; make check tests it)
asan: deps
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) --no-print-directory BUILD=build-asan BIN=build-asan/bin \
	    OPT="-O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" TESTS="$(filter-out test_python test_measure test_accuracy test_readme test_invariants,$(TESTS))" test

# make mutate: each small bug of tests/mutations.txt applied alone must make
# one of the tests it names fail (scripts/mutate.sh); minutes, not in CI.
mutate: all
	@sh scripts/mutate.sh tests/mutations.txt

bench: deps
	@$(MAKE) --no-print-directory all $(BUILD)/bench_core $(BUILD)/bench_sweep $(BUILD)/bench_cluster
	$(BUILD)/bench_core
	$(BUILD)/bench_sweep
	$(BUILD)/bench_cluster

$(BUILD)/bench_cluster: bench/bench_cluster.c $(BUILD)/libwattlas.a
	$(CC) $(CFLAGS_ALL) -O3 $< $(BUILD)/libwattlas.a -o $@ $(LDLIBS_ALL)

$(BUILD)/bench_sweep: bench/bench_sweep.c $(BUILD)/libwattlas.a
	$(CC) $(CFLAGS_ALL) -O3 $< $(BUILD)/libwattlas.a -o $@ $(LDLIBS_ALL)

$(BUILD)/bench_guard: bench/bench_guard.c $(BUILD)/libwattlas.a
	$(CC) $(CFLAGS_ALL) -O3 $< $(BUILD)/libwattlas.a -o $@ $(LDLIBS_ALL)

$(BUILD)/bench_core: bench/bench_core.c $(BUILD)/libwattlas.a
	$(CC) $(CFLAGS_ALL) -O3 $< $(BUILD)/libwattlas.a -o $@ $(LDLIBS_ALL)

# Refit the A100 PCIe coefficients from the DVFS measurements (native builder
# workloads) together with its host's issue cost (into the hand-written
# presets/hosts/a100-calib-host.ini), then carry them to the A100 SXM preset: same GA100 die, so the
# per-SM coefficients transfer; its own idle table and power limit stay.
calibrate: all
	$(BIN)/wattlas calibrate --gpu a100-pcie-40gb $(SHARED)/data/measurements/a100-pcie-40gb-dvfs.csv \
	    --fit gpu,host -o presets/gpus/a100-pcie-40gb.ini --host-out $(BUILD)/a100-calib-host.ini
	sed -i -e "s/^launch_us = .*/$$(grep '^launch_us =' $(BUILD)/a100-calib-host.ini)/" \
	    -e "s/^launch_us_stderr = .*/$$(grep '^launch_us_stderr =' $(BUILD)/a100-calib-host.ini)/" \
	    presets/hosts/a100-calib-host.ini
	awk '/^\[calibration\]/{exit} {print}' presets/gpus/a100-sxm-80gb.ini > presets/gpus/a100-sxm-80gb.ini.tmp
	awk '/^\[calibrated_spec\]/{cs=1; next} /^\[/{cs=0} /^\[calibration\]/{on=1} \
	    on && !cs && !/^note =/{print} \
	    /^\[calibration\]/{print "; transferred from a100-pcie-40gb (same GA100 die) by make calibrate"}' \
	    presets/gpus/a100-pcie-40gb.ini >> presets/gpus/a100-sxm-80gb.ini.tmp
	mv presets/gpus/a100-sxm-80gb.ini.tmp presets/gpus/a100-sxm-80gb.ini
	$(BIN)/wattlas calibrate --gpu h100-sxm-80gb --fit gpu $(SHARED)/data/measurements/h100-sxm-80gb-kernels.csv \
	    --traces $(SHARED)/data/traces -o presets/gpus/h100-sxm-80gb.ini
	# its fp8 tensor-core cycle from this repository's bf16/fp8 GEMM pairs
	# (calib/tc_ratio.c), carried to the H200 and B200 by the transfer
	$(BIN)/wattlas calibrate --gpu presets/gpus/h100-sxm-80gb.ini --fit tc_fp8_power_ratio \
	    data/h100-serve-2026-11/fp8-gemm.csv -o $(BUILD)/h100-fp8.ini
	mv $(BUILD)/h100-fp8.ini presets/gpus/h100-sxm-80gb.ini
	# the GPU from its file just written: the built-in copy is the last build's
	$(BIN)/wattlas calibrate --gpu presets/gpus/h100-sxm-80gb.ini --fit host $(SHARED)/data/measurements/h100-sxm-80gb-host.csv \
	    --traces $(SHARED)/data/traces -o $(BUILD)/server-2023.ini
	for k in launch_us launch_us_stderr op_launch_us op_launch_us_stderr; do \
	    sed -i "s/^$$k = .*/$$(grep "^$$k =" $(BUILD)/server-2023.ini)/" presets/hosts/server-2023.ini || exit 1; done
	# the H200 board of ../shared: the die's latency from the H100 just fitted
	# (the same GH100: its database is the cleaner, 8 clocks and 1.2 s windows),
	# the memory path, the board's power and its controller from the H200's own
	# kernel database (every fifth kernel name held out and scored), on the
	# host those rows ran on, with the board's idle table in [vf]
	awk '/^\[calibration\]/{exit} {print}' presets/gpus/h200-sxm-141gb.ini > $(BUILD)/h200-transfer.ini
	printf '[calibration]\ntransfer_from = presets/gpus/h100-sxm-80gb.ini\n' >> $(BUILD)/h200-transfer.ini
	$(BIN)/wattlas calibrate --gpu $(BUILD)/h200-transfer.ini --fit board $(SHARED)/data/measurements/h200-sxm-141gb-kernels.csv \
	    --traces $(SHARED)/data/traces --idle $(SHARED)/data/gpu-tables/h200-sxm-141gb-idle.csv \
	    --host $(SHARED)/data/hosts/h200-vm-host.ini --holdout every:5 -o presets/gpus/h200-sxm-141gb.ini
	# a training step's host cost per kernel (host_train_launch_us): on each
	# host whose AdamW steps were measured (../shared's H200 host and this
	# repository's three boards' hosts) fitted with its forward's cost held;
	# the geometric mean of the ratios, times the class's forward cost
	set -e; r=$$(sh scripts/host_phase_ratio.sh $(BIN)/wattlas $(SHARED) $(BUILD) train | tee /dev/stderr | \
	    awk '/^ratio /{print $$2, $$4}'); \
	l=$$(awk -F' = ' '/^launch_us =/{print $$2}' presets/hosts/server-2023.ini); \
	t=$$(echo $$r $$l | awk '{if (!($$1 > 0 && $$3 > 0)) exit 1; printf "%.4f %.3f", $$1 * $$3, $$2 * $$3}'); \
	sed -i -e "s/^train_launch_us = .*/train_launch_us = $${t% *}/" \
	    -e "s/^train_launch_us_stderr = .*/train_launch_us_stderr = $${t#* }/" presets/hosts/server-2023.ini
	# the A100 SXM4 80GB of the 500 W class: the A100 SXM's coefficients (the
	# same die) as the prior, the board fitted few-shot to Perseus's stage
	# profiles (stage 0's forward and backward at 38 clocks; their time is
	# relative: time_relative); GPT-3 175B fitted, BLOOM 176B held out and scored
	python3 scripts/perseus_stage_rows.py $(SHARED)/data/public/zeus-perseus/perseus-sosp24-stage-profile-per-clock-raw.csv \
	    a100-sxm-80gb a100-sxm-80gb-500w > $(BUILD)/perseus-stage0-a100-sxm-80gb.csv
	awk '/^\[calibration\]/{exit} {print}' presets/gpus/a100-sxm-80gb-500w.ini > $(BUILD)/a100-500w-transfer.ini
	printf '[calibration]\ntransfer_from = presets/gpus/a100-sxm-80gb.ini\n' >> $(BUILD)/a100-500w-transfer.ini
	$(BIN)/wattlas calibrate --gpu $(BUILD)/a100-500w-transfer.ini --fit auto $(BUILD)/perseus-stage0-a100-sxm-80gb.csv \
	    --holdout bloom-176b -o presets/gpus/a100-sxm-80gb-500w.ini
	# the A100 PCIe 80GB: the A100 PCIe 40GB's coefficients (the same die) as
	# the prior, the board fitted few-shot to Zeus's power-limit sweep of
	# pipeline training on four of them (175-300 W, time relative); BLOOM 3B
	# fitted, GPT-3 XL held out (the cluster's t(175 W)/t(300 W) is its)
	python3 scripts/zeus_power_limit_rows.py $(SHARED)/data/public/zeus-perseus/zeus-a100-pcie-80gb-pp4-power-limit.csv \
	    > $(BUILD)/zeus-a100-pcie-80gb-pp4.csv
	awk '/^\[calibration\]/{exit} {print}' presets/gpus/a100-pcie-80gb.ini > $(BUILD)/a100-80gb-transfer.ini
	printf '[calibration]\ntransfer_from = presets/gpus/a100-pcie-40gb.ini\n' >> $(BUILD)/a100-80gb-transfer.ini
	$(BIN)/wattlas calibrate --gpu $(BUILD)/a100-80gb-transfer.ini --fit auto $(BUILD)/zeus-a100-pcie-80gb-pp4.csv \
	    --holdout gpt3-1.3b -o presets/gpus/a100-pcie-80gb.ini
	# the A40: the A100 PCIe's coefficients through the transfer rules as the
	# start; the board's power and its controller fitted to Perseus's A40
	# stage profiles (60 clocks, time relative; GPT-3 175B fitted, BLOOM 176B
	# held out). The memory's energy per byte stays GDDR6's (core/tech.c): a
	# stage's traffic does not change with the clock, so these rows cannot
	# tell it from the SMs' energy, and freed it takes what they leave (386 pJ
	# a byte, four times GDDR6's)
	python3 scripts/perseus_stage_rows.py $(SHARED)/data/public/zeus-perseus/perseus-sosp24-stage-profile-per-clock-raw.csv \
	    a40 a40-48gb > $(BUILD)/perseus-stage0-a40.csv
	awk '/^\[calibration\]/{exit} {print}' presets/gpus/a40-48gb.ini > $(BUILD)/a40-transfer.ini
	printf '[calibration]\ntransfer_from = presets/gpus/a100-pcie-40gb.ini\n' >> $(BUILD)/a40-transfer.ini
	$(BIN)/wattlas calibrate --gpu $(BUILD)/a40-transfer.ini $(BUILD)/perseus-stage0-a40.csv --holdout bloom-176b \
	    --fit c_active_w,c_gap_w,c_tc_w,c_fp_w,c_sfu_w,c_smem_w,c_l2_w,v_exponent,leak_w_per_c,vf_temp_mhz_per_c,thermal_c_per_w,idle_temp_c,power_cap_frac \
	    -o presets/gpus/a40-48gb.ini

presets-vf: all
	$(BIN)/wattlas presets derive-vf $(SHARED)/data/gpu-tables/a100-pcie-40gb-idle.csv --step-mhz 60
	$(BIN)/wattlas presets derive-vf $(SHARED)/data/gpu-tables/a100-sxm-80gb-idle.csv --step-mhz 60
	$(BIN)/wattlas presets derive-vf $(SHARED)/data/gpu-tables/h100-sxm-80gb-idle.csv --step-mhz 90

docs-figures: run
	grep -v '^#' docs/figures/SOURCES | while read -r name fig; do \
	    cp "results/default-study/$$fig" "docs/figures/$$name" || exit 1; done

# make install PREFIX=...: the command, the library, its headers (one per
# module under include/wattlas/, include/wattlas.h for all) and wattlas.pc.
PREFIX ?= /usr/local
HEADERS = core/wattlas_core.h presets/wattlas_presets.h results/wattlas_results.h serve/wattlas_serve.h \
          calib/wattlas_calib.h sweep/wattlas_sweep.h pareto/wattlas_pareto.h plot/wattlas_plot.h \
          cluster/wattlas_cluster.h learn/wattlas_learn.h
install: all $(BUILD)/libwattlas.a
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/wattlas
	install -m 755 $(BIN)/wattlas $(DESTDIR)$(PREFIX)/bin/
	if [ -x $(BIN)/wattlas-mpi ]; then install -m 755 $(BIN)/wattlas-mpi $(DESTDIR)$(PREFIX)/bin/; fi
	install -m 644 $(BUILD)/libwattlas.a $(DESTDIR)$(PREFIX)/lib/
	for h in $(HEADERS); do install -d $(DESTDIR)$(PREFIX)/include/wattlas/$$(dirname $$h) && \
	    install -m 644 $$h $(DESTDIR)$(PREFIX)/include/wattlas/$$h; done
	sed 's#"\.\./\([a-z]*\)/#"wattlas/\1/#' include/wattlas.h > $(DESTDIR)$(PREFIX)/include/wattlas.h
	sed -e 's#@PREFIX@#$(PREFIX)#' -e 's#@VERSION@#$(shell sed -n 's/^#define WL_VERSION "\(.*\)"/\1/p' core/wattlas_core.h)#' \
	    wattlas.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/wattlas.pc

# bin/wattlas-mpi: the same command with sweep spread over MPI ranks
# (mpirun -np N bin/wattlas-mpi sweep ...); Open MPI from Debian.
MPI_OBJ = $(BUILD)/mpi/cli/main.o $(BUILD)/mpi/cli/cmd_sweep.o $(BUILD)/mpi/sweep/mpi.o
mpi: deps
	@$(MAKE) --no-print-directory $(BIN)/wattlas-mpi

$(BUILD)/mpi/%.o: %.c $(wildcard */*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_ALL) -DWL_MPI -c $< -o $@

$(BIN)/wattlas-mpi: $(MPI_OBJ) $(filter-out $(BUILD)/cli/main.o $(BUILD)/cli/cmd_sweep.o,$(CLI_OBJ)) $(BUILD)/libwattlas.a
	@mkdir -p $(BIN)
	$(MPICC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

# libFuzzer harnesses (clang, ASan, UBSan): each runs FUZZ_SECONDS (or until
# FUZZ_RUNS executions) on a copy of its seed corpus; a finding is kept in
# tests/fuzz/regress/NAME, which make check replays. OpenMP is left out
# (Debian's clang has no libomp by default); lists are capped at 4096 values
# instead of 10^6 (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), the same checks.
FUZZ_FLAGS = -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
fuzz:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@sh tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OMPFLAGS= \
	    OPT="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" EXTRA_CFLAGS=-Wno-unknown-pragmas \
	    build-fuzz/libwattlas.a $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_files.h build-fuzz/libwattlas.a
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer $< build-fuzz/libwattlas.a -o $@ $(LDLIBS_ALL)

clean:
	rm -rf build build-asan build-fuzz bin
