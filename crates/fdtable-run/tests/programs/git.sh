# git: a fresh repository, commits, log, diff, status, a pager through a pipe.
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export HOME=$PWD GIT_CONFIG_NOSYSTEM=1
git init -q -b main repo && cd repo
seq 100 > f.txt; echo hello > g.txt
git add . && git commit -q -m first
sed -i 's/^50$/fifty/' f.txt
git diff --stat
git commit -q -am second
git log --oneline | cat
git -c core.pager='cat' log -1 --format=%H%n%s
git status --short; echo status $?
git show HEAD:g.txt
git rev-list --count HEAD
git gc -q && git fsck --no-progress && echo fsck ok
git branch b2 && git checkout -q b2 && git log --oneline -1 | cut -c9-
