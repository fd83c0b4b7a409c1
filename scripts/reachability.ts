// What the running service reaches, computed with the TypeScript compiler (no regex): which
// top-level declarations of src/ are reached from the entry points (src/main.ts and scripts/*.ts),
// so that `npm run rules` can fail on an export nothing running uses and on a rule row whose
// function nothing running calls.
//
// The graph: a node is a top-level declaration (function, class, const, type, interface) of a
// "live" file (under src/ or scripts/). An edge runs from a declaration to every top-level
// declaration an identifier inside it resolves to, following imports and re-exports to the
// declaration itself. The roots are the statements that run when a module loads (calls,
// `if`s, `await`s at the top level: not declarations, whose bodies run only when something uses
// them) of every module the entry points load through value imports, and `declare module`
// augmentations (types every file sees). A declaration is reached when a root reaches it; it is
// reached at run time when the path uses only value references (not a type annotation,
// `implements` or `typeof` in a type). Test, bench and other files are not live: what only they
// use is not reached, even when a script imports them.
import path from 'node:path';
import ts from 'typescript';

export type UnusedExport = {
  file: string;
  line: number;
  name: string;
  /** 'own-file': used only inside its file (un-export it); 'unused': nothing running uses it. */
  kind: 'own-file' | 'unused';
  /** The test or bench files that import it, when any. */
  importedBy: string[];
};

export type Reachability = {
  unusedExports: UnusedExport[];
  /**
   * The top-level declaration `name` of `file` (exported under that name, or declared there), and
   * whether it is reached (a value: at run time; a type: by any reference); undefined when the file
   * is not in the program or has no such name.
   */
  lookup(file: string, name: string): { reached: boolean } | undefined;
};

export type ReachabilityOptions = {
  /** The tsconfig.json whose files and options make the program (relative to root). */
  tsconfig?: string;
  /** Entry files, relative to root. */
  entries: string[];
  /** Folders whose files run (relative to root); the graph does not follow into other files. */
  live?: string[];
  /** Folders whose exports must be used (relative to root). */
  checked?: string[];
};

type Reference = { target: ts.Symbol; value: boolean };
type Declaration = { symbol: ts.Symbol; file: string; nodes: ts.Node[]; references: Reference[] };

const isUnder = (file: string, folders: string[]) =>
  folders.some((folder) => file === folder || file.startsWith(`${folder}/`));

/** Whether `node` is a heritage `extends` of a class: a value (the base class runs), not a type. */
function isClassExtends(node: ts.Node): boolean {
  return (
    ts.isExpressionWithTypeArguments(node) &&
    ts.isHeritageClause(node.parent) &&
    node.parent.token === ts.SyntaxKind.ExtendsKeyword &&
    (ts.isClassDeclaration(node.parent.parent) || ts.isClassExpression(node.parent.parent))
  );
}

/** Names that never resolve to a top-level declaration: `a.b`'s `b`, `A.B`'s `B`, property and member names. */
function isMemberName(id: ts.Identifier): boolean {
  const parent = id.parent;
  if (ts.isQualifiedName(parent)) return parent.right === id;
  if (ts.isPropertyAccessExpression(parent)) return parent.name === id;
  if (ts.isLabeledStatement(parent) || ts.isBreakOrContinueStatement(parent)) return true;
  return (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isGetAccessor(parent) ||
      ts.isSetAccessor(parent) ||
      ts.isEnumMember(parent) ||
      ts.isParameter(parent) ||
      ts.isBindingElement(parent) ||
      ts.isImportSpecifier(parent) ||
      ts.isExportSpecifier(parent)) &&
    parent.name === id
  );
}

/** The top-level declarations a statement introduces, with the node holding each one's body. */
function declarationsOf(statement: ts.Statement): { name: ts.Node; node: ts.Node }[] {
  if (
    (ts.isFunctionDeclaration(statement) ||
      ts.isClassDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isEnumDeclaration(statement)) &&
    statement.name
  )
    return [{ name: statement.name, node: statement }];
  if (ts.isVariableStatement(statement)) {
    const out: { name: ts.Node; node: ts.Node }[] = [];
    for (const declaration of statement.declarationList.declarations) {
      const names: ts.Node[] = [];
      const collect = (name: ts.BindingName) => {
        if (ts.isIdentifier(name)) names.push(name);
        else for (const element of name.elements) if (!ts.isOmittedExpression(element)) collect(element.name);
      };
      collect(declaration.name);
      for (const name of names) out.push({ name, node: declaration });
    }
    return out;
  }
  return [];
}

const isAliasStatement = (statement: ts.Statement) =>
  ts.isImportDeclaration(statement) ||
  ts.isImportEqualsDeclaration(statement) ||
  ts.isExportDeclaration(statement);

/** Builds the program of `options.tsconfig` under `root` and computes what the entries reach. */
export function analyseReachability(root: string, options: ReachabilityOptions): Reachability {
  const live = options.live ?? ['src', 'scripts'];
  const checked = options.checked ?? ['src'];
  const configPath = path.join(root, options.tsconfig ?? 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (file) => ts.sys.readFile(file));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, path.dirname(configPath));
  const entries = options.entries.map((entry) => path.join(root, entry));
  const program = ts.createProgram([...new Set([...parsed.fileNames, ...entries])], parsed.options);
  const checker = program.getTypeChecker();
  const relative = (file: string) => path.relative(root, file).split(path.sep).join('/');

  const ownFiles = program
    .getSourceFiles()
    .filter((file) => !file.isDeclarationFile && !relative(file.fileName).startsWith('..'))
    .filter((file) => !relative(file.fileName).split('/').includes('node_modules'));
  const liveFiles = ownFiles.filter((file) => isUnder(relative(file.fileName), live));

  // The symbol a use resolves to: through an import or re-export to the declaration, and from a
  // declaration's local symbol to the exported one the declaration table is keyed by.
  const resolve = (symbol: ts.Symbol | undefined): ts.Symbol | undefined => {
    if (!symbol) return undefined;
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return (symbol as ts.Symbol & { exportSymbol?: ts.Symbol }).exportSymbol ?? symbol;
  };

  const declarations = new Map<ts.Symbol, Declaration>();
  const roots: { file: string; node: ts.Node }[] = [];
  const rootsOf = new Map<string, ts.Node[]>();
  for (const file of liveFiles) {
    const name = relative(file.fileName);
    const fileRoots: ts.Node[] = [];
    for (const statement of file.statements) {
      if (isAliasStatement(statement)) continue;
      const introduced = declarationsOf(statement);
      if (introduced.length === 0) {
        // What runs when the module loads, and `declare module` augmentations (types every file
        // sees): the roots, once the module is known to load.
        fileRoots.push(statement);
        continue;
      }
      for (const { name: declarationName, node } of introduced) {
        const symbol = resolve(checker.getSymbolAtLocation(declarationName));
        if (!symbol) continue;
        const existing = declarations.get(symbol);
        if (existing) existing.nodes.push(node);
        else declarations.set(symbol, { symbol, file: name, nodes: [node], references: [] });
      }
    }
    rootsOf.set(name, fileRoots);
  }

  const referencesIn = (node: ts.Node): Reference[] => {
    const out: Reference[] = [];
    const visit = (child: ts.Node, value: boolean) => {
      if (ts.isIdentifier(child)) {
        if (isMemberName(child)) return;
        const symbol = ts.isShorthandPropertyAssignment(child.parent)
          ? checker.getShorthandAssignmentValueSymbol(child.parent)
          : checker.getSymbolAtLocation(child);
        const target = resolve(symbol);
        if (target && declarations.has(target)) out.push({ target, value });
        return;
      }
      if (isClassExtends(child)) {
        const heritage = child as ts.ExpressionWithTypeArguments;
        visit(heritage.expression, value);
        heritage.typeArguments?.forEach((argument) => visit(argument, false));
        return;
      }
      // `implements` and an interface's `extends` name types; a class's `extends` runs (above).
      const typeHeritage =
        ts.isHeritageClause(child) &&
        (child.token === ts.SyntaxKind.ImplementsKeyword || ts.isInterfaceDeclaration(child.parent));
      const inType = !value || ts.isTypeNode(child) || typeHeritage;
      ts.forEachChild(child, (grandchild) => visit(grandchild, !inType));
    };
    // Types, and ambient modules (`declare module`, `declare global`: erasable syntax has no other).
    const typeOnly =
      ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isModuleDeclaration(node);
    visit(node, !typeOnly);
    return out;
  };
  for (const declaration of declarations.values())
    for (const node of declaration.nodes) declaration.references.push(...referencesIn(node));

  // The modules that load: the entries, then what their value imports and re-exports name.
  const loaded = new Set<string>();
  const sourceByName = new Map(liveFiles.map((file) => [relative(file.fileName), file]));
  const load = (name: string) => {
    const file = sourceByName.get(name);
    if (!file || loaded.has(name)) return;
    loaded.add(name);
    for (const statement of file.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) ||
        (ts.isExportDeclaration(statement) && !statement.isTypeOnly)
          ? statement.moduleSpecifier
          : undefined;
      if (!specifier || !ts.isStringLiteral(specifier)) continue;
      const target = ts.resolveModuleName(specifier.text, file.fileName, parsed.options, ts.sys);
      const resolved = target.resolvedModule?.resolvedFileName;
      if (resolved) load(relative(resolved));
    }
    const findDynamic = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        const target = ts.resolveModuleName(node.arguments[0].text, file.fileName, parsed.options, ts.sys);
        const resolved = target.resolvedModule?.resolvedFileName;
        if (resolved) load(relative(resolved));
      }
      ts.forEachChild(node, findDynamic);
    };
    findDynamic(file);
  };
  for (const entry of options.entries) load(entry);
  for (const name of loaded) for (const node of rootsOf.get(name) ?? []) roots.push({ file: name, node });

  // Reached through any reference, and at run time through value references only.
  const reached = new Set<ts.Symbol>();
  const reachedAtRunTime = new Set<ts.Symbol>();
  const usedFrom = new Map<ts.Symbol, Set<string>>();
  const walk = (start: Reference[], startFile: string, value: boolean) => {
    const set = value ? reachedAtRunTime : reached;
    const pending: { references: Reference[]; from: string }[] = [{ references: start, from: startFile }];
    for (let item = pending.pop(); item; item = pending.pop()) {
      for (const reference of item.references) {
        const owner = declarations.get(reference.target);
        if (!owner) continue;
        if (owner.file !== item.from) {
          const files = usedFrom.get(reference.target) ?? new Set<string>();
          files.add(item.from);
          usedFrom.set(reference.target, files);
        }
        if ((value && !reference.value) || set.has(reference.target)) continue;
        set.add(reference.target);
        pending.push({ references: owner.references, from: owner.file });
      }
    }
  };
  for (const root of roots) {
    const references = referencesIn(root.node);
    walk(references, root.file, false);
    walk(references, root.file, true);
  }

  // Which test and bench files import each declaration (only to say so in the report).
  const importedBy = new Map<ts.Symbol, Set<string>>();
  for (const file of ownFiles) {
    const name = relative(file.fileName);
    if (isUnder(name, live)) continue;
    for (const statement of file.statements) {
      if (!ts.isImportDeclaration(statement)) continue;
      const bindings = statement.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      for (const element of bindings.elements) {
        const target = resolve(checker.getSymbolAtLocation(element.name));
        if (!target || !declarations.has(target)) continue;
        const files = importedBy.get(target) ?? new Set<string>();
        files.add(name);
        importedBy.set(target, files);
      }
    }
  }

  const exportsOf = (file: ts.SourceFile) => {
    const moduleSymbol = checker.getSymbolAtLocation(file);
    return moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
  };

  const unusedExports: UnusedExport[] = [];
  for (const file of liveFiles) {
    const name = relative(file.fileName);
    if (!isUnder(name, checked)) continue;
    for (const exported of exportsOf(file)) {
      const target = resolve(exported);
      const declaration = target && declarations.get(target);
      // Re-exports are checked where their declaration is.
      if (!declaration || declaration.file !== name) continue;
      if (usedFrom.get(declaration.symbol)?.size) continue;
      const start = declaration.nodes[0]?.getStart(file) ?? 0;
      unusedExports.push({
        file: name,
        line: file.getLineAndCharacterOfPosition(start).line + 1,
        name: exported.name,
        kind: reached.has(declaration.symbol) ? 'own-file' : 'unused',
        importedBy: [...(importedBy.get(declaration.symbol) ?? [])].sort(),
      });
    }
  }
  unusedExports.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);

  const lookup = (fileName: string, name: string): { reached: boolean } | undefined => {
    const file = program.getSourceFile(path.join(root, fileName));
    if (!file) return undefined;
    const exported = resolve(exportsOf(file).find((symbol) => symbol.name === name));
    const target =
      exported && declarations.has(exported)
        ? exported
        : [...declarations.values()].find(
            (declaration) => declaration.file === fileName && declaration.symbol.name === name,
          )?.symbol;
    if (!target) return undefined;
    const isValue = (target.flags & ts.SymbolFlags.Value) !== 0;
    return { reached: isValue ? reachedAtRunTime.has(target) : reached.has(target) };
  };

  return { unusedExports, lookup };
}
