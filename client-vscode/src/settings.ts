import * as os from 'node:os';
import * as vscode from 'vscode';
import { ClientSettings, normalizeSettings, SERVER_KEYS, ServerSettings, toServerSettings } from './core/settings';
import { log } from './logging';

export const SECTION = 'regrapht';

function folderFor(scope?: vscode.ConfigurationScope | null): vscode.WorkspaceFolder | undefined {
    if (scope instanceof vscode.Uri) {
        return vscode.workspace.getWorkspaceFolder(scope);
    }
    if (scope && typeof scope === 'object' && 'uri' in scope && scope.uri instanceof vscode.Uri) {
        return vscode.workspace.getWorkspaceFolder(scope.uri);
    }
    return vscode.workspace.workspaceFolders?.[0];
}

const reported = new Set<string>();

/** Read and normalise the `regrapht` section for a resource (or the first workspace folder). */
export function readSettings(scope?: vscode.ConfigurationScope | null): ClientSettings {
    const config = vscode.workspace.getConfiguration(SECTION, scope ?? undefined);
    const raw: Record<string, unknown> = {};
    // every key the server takes (compileCommands and extraCompilerArgs were missing here before)
    for (const key of ['python', ...SERVER_KEYS]) {
        // the one dotted setting: `regrapht.profile.enabled` is the server's `profileEnabled`
        raw[key] = config.get(key === 'profileEnabled' ? 'profile.enabled' : key);
    }
    const { settings, problems } = normalizeSettings(raw, {
        home: os.homedir(),
        workspaceFolder: folderFor(scope)?.uri.fsPath,
    }, process.env);
    for (const problem of problems) {
        if (!reported.has(problem)) {
            reported.add(problem);
            log.warn(`settings: ${problem}`);
        }
    }
    return settings;
}

export function readServerSettings(scope?: vscode.ConfigurationScope | null): ServerSettings {
    return toServerSettings(readSettings(scope));
}

/** Write `regrapht.<key>` where the user keeps it: workspace if set there, else user settings. */
export async function writeSetting(key: string, value: unknown): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const inspected = config.inspect(key);
    const target = inspected?.workspaceFolderValue !== undefined
        ? vscode.ConfigurationTarget.WorkspaceFolder
        : inspected?.workspaceValue !== undefined
            ? vscode.ConfigurationTarget.Workspace
            : vscode.ConfigurationTarget.Global;
    await config.update(key, value, target);
}
