// SPDX-License-Identifier: GPL-2.0
/* A fixture for the error-block finder (tests/coverage.sh), not kernel code. */
static int sample_add(int nid, void *p)
{
	int ret;

	if (!p)
		return -ENOMEM;
	ret = step_one(nid);
	if (ret)
		goto err_undo;
	if (nid > 4) {
		pr_info("big node\n");
		nid = 4;
	}
	if (step_two(nid) < 0) {
		ret = -EINVAL;
		goto out;
	}
	if (unlikely(nid == 3)) return -EIO;
	if (nid == 2) { ret = -EAGAIN; goto out; }
	return 0;
err_undo:
	undo(nid);
out:
	return ret;
}

static void *sample_lookup(int nr)
{
	void *p;

	if (nr > 10)
		return NULL;
	p = alloc(nr);
	if (!p)
		return NULL;
	/* if (fake) return -EBUSY; a comment */
	log("if (x) return -E2BIG;");
#ifdef CONFIG_SAMPLE
	if (nr)
		return ERR_PTR(-ENODEV);
#endif
	return p;
}
