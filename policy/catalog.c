/* The protected and hidden catalogs (include/warden/catalog.h): one table,
 * one row per path, with the reason SECURITY.md gives for it.  Sorted by
 * group, then as people read them. */
#include <string.h>

#include "warden/catalog.h"

#define P WCAT_PROTECT
#define H WCAT_HIDE
#define HOME(n, k, w, g, y) { "~/" n, WCAT_HOME, k, w, g, y }
#define PROJ(n, k, w, g, y) { n, WCAT_PROJECT, k, w, g, y }
#define F WCAT_FILE
#define D WCAT_DIR

const struct wcat_entry wcat_entries[] = {
	/* -- what shells run at start and exit ----------------------------- */
	HOME(".profile", F, P, "shell startup", "login shells (sh, dash, bash without .bash_profile) run it"),
	HOME(".bashrc", F, P, "shell startup", "every interactive bash runs it"),
	HOME(".bash_profile", F, P, "shell startup", "bash login shells run it"),
	HOME(".bash_login", F, P, "shell startup", "bash login shells run it when .bash_profile is missing"),
	HOME(".bash_logout", F, P, "shell startup", "bash runs it when a login shell exits"),
	HOME(".bash_aliases", F, P, "shell startup", "Debian's .bashrc runs it"),
	HOME(".zshenv", F, P, "shell startup", "every zsh runs it"),
	HOME(".zprofile", F, P, "shell startup", "zsh login shells run it"),
	HOME(".zshrc", F, P, "shell startup", "every interactive zsh runs it"),
	HOME(".zlogin", F, P, "shell startup", "zsh login shells run it"),
	HOME(".zlogout", F, P, "shell startup", "zsh runs it when a login shell exits"),
	HOME(".oh-my-zsh", D, P, "shell startup", "zsh sources this framework's plugins and themes at start"),
	HOME(".config/fish", D, P, "shell startup", "fish runs config.fish and conf.d/ at start"),
	HOME(".cshrc", F, P, "shell startup", "csh and tcsh run it"),
	HOME(".tcshrc", F, P, "shell startup", "tcsh runs it"),
	HOME(".login", F, P, "shell startup", "csh login shells run it"),
	HOME(".logout", F, P, "shell startup", "csh runs it when a login shell exits"),
	HOME(".kshrc", F, P, "shell startup", "ksh runs it (through $ENV)"),
	HOME(".mkshrc", F, P, "shell startup", "mksh runs it"),
	HOME(".inputrc", F, P, "shell startup", "readline's macros type text, commands included, into every shell"),
	/* -- what the desktop session and the user's systemd run --------------- */
	HOME(".xprofile", F, P, "session", "the display manager runs it at login"),
	HOME(".xinitrc", F, P, "session", "startx runs it"),
	HOME(".xsession", F, P, "session", "the X session runs it at login"),
	HOME(".xsessionrc", F, P, "session", "Debian's X session runs it at login"),
	HOME(".pam_environment", F, P, "session", "sets the environment of every login (LD_PRELOAD included)"),
	HOME(".config/environment.d", D, P, "session", "systemd sets the user session's environment from it"),
	HOME(".config/systemd", D, P, "session", "systemd --user starts the units and timers in user/"),
	HOME(".local/share/systemd", D, P, "session", "systemd --user reads units from user/ there too"),
	HOME(".config/autostart", D, P, "session", "the desktop starts its entries at login"),
	HOME(".config/plasma-workspace", D, P, "session", "KDE runs the scripts in env/ and shutdown/"),
	HOME(".local/share/applications", D, P, "session", "desktop entries: the command that opens a file type"),
	HOME(".config/mimeapps.list", F, P, "session", "which program opens which file type"),
	HOME(".config/pipewire", D, P, "session", "PipeWire runs the programs of its context.exec at every login"),
	HOME(".config/dconf", D, P, "session", "GNOME's settings: custom keybindings' and GNOME Terminal's commands"),
	HOME(".config/i3", D, P, "session", "i3 runs its exec lines at login"),
	HOME(".i3", D, P, "session", "i3 runs its exec lines at login"),
	HOME(".config/sway", D, P, "session", "sway runs its exec lines at login"),
	HOME(".config/hypr", D, P, "session", "Hyprland runs its exec-once lines at login"),
	HOME(".config/kitty", D, P, "session", "kitty starts the shell its kitty.conf names"),
	HOME(".config/alacritty", D, P, "session", "Alacritty starts the shell its configuration names"),
	HOME(".config/wezterm", D, P, "session", "WezTerm runs its Lua configuration"),
	HOME(".wezterm.lua", F, P, "session", "WezTerm runs its Lua configuration"),
	/* -- directories on PATH ------------------------------------------------ */
	HOME("bin", D, P, "on PATH", "Debian's .profile puts it on PATH once it exists"),
	HOME(".local/bin", D, P, "on PATH", "Debian's .profile puts it on PATH once it exists"),
	/* -- what interpreters and tools run when they start -------------------- */
	HOME(".local/lib", D, P, "startup code", "Python runs the .pth files of the user site-packages at every start"),
	HOME(".ipython", D, P, "startup code", "IPython runs its profile's startup scripts"),
	HOME(".jupyter", D, P, "startup code", "Jupyter runs its configuration files (Python)"),
	HOME(".Rprofile", F, P, "startup code", "R runs it at every start"),
	HOME(".Renviron", F, P, "startup code", "R takes its environment from it (R_PROFILE_USER, ...)"),
	HOME(".R", D, P, "startup code", "R's Makevars: the compiler commands when a package builds"),
	HOME(".yarnrc", F, P, "startup code", "yarn takes its options from it (the scripts' shell)"),
	HOME(".yarnrc.yml", F, P | H, "startup code", "yarn's plugins and options; may hold npmAuthToken"),
	HOME(".gemrc", F, P, "startup code", "gem takes its options from it (install hooks, sources)"),
	HOME(".cargo", D, P, "startup code", "cargo's configuration (rustc-wrapper) and ~/.cargo/bin on PATH"),
	HOME(".rustup", D, P, "startup code", "the Rust toolchains cargo runs"),
	HOME(".pyenv", D, P, "startup code", "pyenv's shims are on PATH and its init is sourced by shells"),
	HOME(".nvm", D, P, "startup code", "nvm.sh is sourced by shells; its node binaries are on PATH"),
	HOME(".sdkman", D, P, "startup code", "sdkman's init is sourced by shells; its JDKs are on PATH"),
	HOME(".asdf", D, P, "startup code", "asdf's shims are on PATH and its script is sourced by shells"),
	HOME(".config/mise", D, P, "startup code", "mise's tools are on PATH and it runs its hooks"),
	HOME(".gradle", D, P, "startup code", "Gradle runs the scripts in init.d/ at every build"),
	HOME(".m2", D, P, "startup code", "Maven runs the plugins in its repository at every build"),
	HOME(".gitconfig", F, P, "git", "git runs the commands it names (core.pager, aliases, core.fsmonitor, hooksPath)"),
	HOME(".config/git", D, P, "git", "git's configuration and attributes, as ~/.gitconfig"),
	HOME(".gdbinit", F, P, "startup code", "gdb runs it"),
	HOME(".config/gdb", D, P, "startup code", "gdb runs gdbinit there"),
	HOME(".lldbinit", F, P, "startup code", "lldb runs it"),
	HOME(".tmux.conf", F, P, "startup code", "tmux runs its run-shell commands"),
	HOME(".config/tmux", D, P, "startup code", "tmux runs tmux.conf there"),
	HOME(".screenrc", F, P, "startup code", "screen runs its commands"),
	HOME(".lesskey", F, P, "startup code", "less reads its #env section: LESSOPEN is a command less runs on every file (man, git's pager)"),
	HOME(".less", F, P, "startup code", "less's compiled lesskey file, #env section included"),
	HOME(".psqlrc", F, P, "startup code", "psql runs it, \\! shell commands included"),
	HOME(".hgrc", F, P, "startup code", "Mercurial runs the hooks and loads the extensions it names"),
	HOME(".local/share/jupyter", D, P, "startup code", "Jupyter runs the argv of the kernel specs in kernels/ (before the system's)"),
	HOME(".selected_editor", F, P, "startup code", "Debian's sensible-editor runs the program it names (crontab -e, ...)"),
	HOME(".curlrc", F, P, "startup code", "curl takes its options from it (output files, proxies)"),
	HOME(".wgetrc", F, P, "startup code", "wget takes its options from it"),
	HOME(".vimrc", F, P, "editors and agents", "vim runs it"),
	HOME(".vim", D, P, "editors and agents", "vim runs its plugins"),
	HOME(".exrc", F, P, "editors and agents", "vi runs it"),
	HOME(".config/nvim", D, P, "editors and agents", "neovim runs init.lua and its plugins"),
	HOME(".local/share/nvim", D, P, "editors and agents", "neovim's installed plugins"),
	HOME(".emacs", F, P, "editors and agents", "emacs runs it"),
	HOME(".emacs.d", D, P, "editors and agents", "emacs runs init.el and its packages"),
	HOME(".config/emacs", D, P, "editors and agents", "emacs runs init.el there"),
	HOME(".vscode", D, P, "editors and agents", "VS Code's extensions: code it runs"),
	HOME(".vscode-server", D, P, "editors and agents", "VS Code's remote server and its extensions"),
	HOME(".config/Code", D, P, "editors and agents", "VS Code's settings (terminal profiles, tasks)"),
	HOME(".cursor", D, P, "editors and agents", "Cursor's extensions and MCP servers"),
	HOME(".config/Cursor", D, P, "editors and agents", "Cursor's settings"),
	HOME(".claude", D, P, "editors and agents", "Claude Code's settings and hooks: commands it runs"),
	HOME(".claude.json", F, P | H, "editors and agents", "Claude Code's MCP servers (commands it starts) and its state"),
	HOME(".config/Claude", D, P, "editors and agents", "Claude Desktop's MCP servers: commands it starts"),
	HOME(".codex", D, P | H, "editors and agents", "Codex's configuration (MCP servers, commands) and credentials"),
	HOME(".continue", D, P, "editors and agents", "Continue's configuration (code it runs)"),
	/* -- warden's own ----------------------------------------------------------- */
	HOME(".config/warden", D, P | H, "warden", "warden's profiles (a planted one would widen the next run) and chat settings (API keys)"),
	HOME(".local/share/warden", D, P | H, "warden", "the broker's conversations and notebooks"),
	HOME(".local/state/warden", D, P | H, "warden", "the audit log"),
	/* -- credentials, browsers, histories: hidden, and protected too, so that a
	 * missing one cannot be created: a jail that made it (a hard link to a
	 * file of its own, say) would read what a tool later writes into it in
	 * place -------------------------------------------------------------- */
	HOME(".ssh", D, P | H, "credentials", "ssh keys; ssh runs rc and config's ProxyCommand, sshd trusts authorized_keys"),
	HOME(".gnupg", D, P | H, "credentials", "GnuPG keys; gpg-agent's configuration names programs"),
	HOME(".aws", D, P | H, "credentials", "AWS credentials; aws runs a profile's credential_process"),
	HOME(".azure", D, P | H, "credentials", "Azure CLI tokens; az runs the Python of its cliextensions"),
	HOME(".config/gcloud", D, P | H, "credentials", "Google Cloud credentials; gcloud takes its proxy and CA from its configurations"),
	HOME(".oci", D, P | H, "credentials", "Oracle Cloud keys"),
	HOME(".config/doctl", D, P | H, "credentials", "DigitalOcean tokens"),
	HOME(".config/hcloud", D, P | H, "credentials", "Hetzner Cloud tokens"),
	HOME(".s3cfg", F, P | H, "credentials", "s3cmd keys; s3cmd runs its gpg_command"),
	HOME(".boto", F, P | H, "credentials", "boto keys; boto and gsutil load the plugins of its plugin_directory"),
	HOME(".config/rclone", D, P | H, "credentials", "rclone's remotes and their secrets; rclone runs its password_command"),
	HOME(".kube", D, P | H, "credentials", "Kubernetes contexts and tokens; kubectl runs a user's exec plugin"),
	HOME(".docker", D, P | H, "credentials", "container registry logins; its cli-plugins are programs docker runs"),
	HOME(".config/containers", D, P | H, "credentials", "podman's registry logins (auth.json); containers.conf names the runtime and hooks podman runs"),
	HOME(".npmrc", F, P | H, "credentials", "npm registry tokens; npm takes its options from it (script-shell)"),
	HOME(".pypirc", F, P | H, "credentials", "PyPI upload tokens"),
	HOME(".config/pip", D, P | H, "credentials", "pip's index URLs (with credentials) and options"),
	HOME(".pip", D, P | H, "credentials", "pip's index URLs (with credentials) and options"),
	HOME(".netrc", F, P | H, "credentials", "passwords for hosts (curl, git, ftp)"),
	HOME(".gem/credentials", F, P | H, "credentials", "RubyGems API keys"),
	HOME(".cargo/credentials.toml", F, P | H, "credentials", "crates.io tokens"),
	HOME(".cargo/credentials", F, P | H, "credentials", "crates.io tokens"),
	HOME(".m2/settings.xml", F, P | H, "credentials", "Maven repository passwords"),
	HOME(".m2/settings-security.xml", F, P | H, "credentials", "Maven's master password"),
	HOME(".gradle/gradle.properties", F, P | H, "credentials", "Gradle repository and signing secrets"),
	HOME(".config/composer/auth.json", F, P | H, "credentials", "Composer tokens"),
	HOME(".composer/auth.json", F, P | H, "credentials", "Composer tokens"),
	HOME(".git-credentials", F, P | H, "credentials", "git's stored passwords"),
	HOME(".config/gh", D, P | H, "credentials", "GitHub CLI tokens; gh runs the pager, editor and shell aliases its config names"),
	HOME(".config/glab-cli", D, P | H, "credentials", "GitLab CLI tokens; glab runs the editor and browser its config names"),
	HOME(".config/hub", F, P | H, "credentials", "hub's GitHub token"),
	HOME(".terraform.d", D, P | H, "credentials", "Terraform Cloud tokens; terraform runs the providers in plugins/"),
	HOME(".terraformrc", F, P | H, "credentials", "Terraform's credentials helper and plugin sources: programs terraform runs"),
	HOME(".vault-token", F, P | H, "credentials", "a HashiCorp Vault token"),
	HOME(".pgpass", F, P | H, "credentials", "PostgreSQL passwords"),
	HOME(".my.cnf", F, P | H, "credentials", "MySQL passwords; mysql runs its pager and loads plugin-dir's libraries"),
	HOME(".mylogin.cnf", F, P | H, "credentials", "MySQL login paths"),
	HOME(".local/share/keyrings", D, P | H, "credentials", "the desktop keyring"),
	HOME(".password-store", D, P | H, "credentials", "pass's passwords"),
	HOME(".pki", D, P | H, "credentials", "NSS certificates and keys; Chrome and NSS programs load the modules pkcs11.txt names"),
	HOME(".mozilla", D, P | H, "browsers", "Firefox profiles: cookies, saved passwords"),
	HOME(".thunderbird", D, P | H, "browsers", "Thunderbird profiles: mail and passwords"),
	HOME(".config/google-chrome", D, P | H, "browsers", "Chrome profiles: cookies, saved passwords"),
	HOME(".config/chromium", D, P | H, "browsers", "Chromium profiles: cookies, saved passwords"),
	HOME(".config/BraveSoftware", D, P | H, "browsers", "Brave profiles: cookies, saved passwords"),
	HOME(".config/microsoft-edge", D, P | H, "browsers", "Edge profiles: cookies, saved passwords"),
	HOME(".config/vivaldi", D, P | H, "browsers", "Vivaldi profiles: cookies, saved passwords"),
	HOME(".bash_history", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".zsh_history", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".zhistory", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".history", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".sh_history", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".local/share/fish/fish_history", F, P | H, "histories", "commands typed, secrets among them"),
	HOME(".python_history", F, P | H, "histories", "Python REPL input"),
	HOME(".node_repl_history", F, P | H, "histories", "Node REPL input"),
	HOME(".irb_history", F, P | H, "histories", "Ruby REPL input"),
	HOME(".Rhistory", F, P | H, "histories", "R input"),
	HOME(".psql_history", F, P | H, "histories", "SQL typed into psql"),
	HOME(".mysql_history", F, P | H, "histories", "SQL typed into mysql"),
	HOME(".sqlite_history", F, P | H, "histories", "SQL typed into sqlite3"),
	HOME(".rediscli_history", F, P | H, "histories", "redis-cli input (AUTH included)"),
	HOME(".lesshst", F, P | H, "histories", "less's searches"),
	HOME(".viminfo", F, P | H, "histories", "vim's registers, searches and history"),
	/* -- at every project root: the workspace, ~, and every repository ----- */
	PROJ(".git", D, P, "git", "git runs hooks and the commands its config names (core.fsmonitor at every status) when you use the repository"),
	PROJ(".gitmodules", F, P, "git", "git submodule fetches what it names"),
	PROJ(".husky", D, P, "git", "git hooks when core.hooksPath names it (husky)"),
	PROJ(".pre-commit-config.yaml", F, P, "git", "pre-commit runs the hooks it names at every commit"),
	PROJ(".envrc", F, P, "editors and agents", "direnv runs it when you enter the directory"),
	PROJ(".vscode", D, P, "editors and agents", "VS Code runs the folder's tasks and reads its settings"),
	PROJ(".idea", D, P, "editors and agents", "JetBrains IDEs run its run configurations"),
	PROJ(".devcontainer", D, P, "editors and agents", "dev containers run its lifecycle commands"),
	PROJ(".cursor", D, P, "editors and agents", "Cursor's project rules and MCP servers"),
	PROJ(".claude", D, P, "editors and agents", "Claude Code runs the project's hooks"),
	PROJ(".mcp.json", F, P, "editors and agents", "MCP clients start the servers it names"),
	PROJ(".env", F, H, "credentials", "the project's secrets"),
	PROJ(".env.*", F, H, "credentials", "the project's secrets (.env.local, .env.production, ...)"),
	PROJ(".npmrc", F, P | H, "credentials", "npm registry tokens; npm takes its options from it"),
	PROJ(".pypirc", F, H, "credentials", "PyPI upload tokens"),
	PROJ(".netrc", F, H, "credentials", "passwords for hosts"),
	PROJ(".git-credentials", F, H, "credentials", "git's stored passwords"),
};

const size_t wcat_n = sizeof(wcat_entries) / sizeof(wcat_entries[0]);

const struct wcat_entry *wcat_find(const char *name)
{
	for (size_t i = 0; i < wcat_n; i++)
		if (!strcmp(wcat_entries[i].name, name))
			return &wcat_entries[i];
	return NULL;
}

const char *wcat_rel(const struct wcat_entry *e)
{
	return e->base == WCAT_HOME ? e->name + 2 : e->name;
}

bool wcat_match(const struct wcat_entry *e, const char *name)
{
	const char *rel = wcat_rel(e);
	size_t n = strlen(rel);

	if (n && rel[n - 1] == '*')
		return !strncmp(name, rel, n - 1) && name[n - 1] != '\0';
	return !strcmp(name, rel);
}
